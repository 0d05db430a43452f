"""The episode viewer (``python -m vlui.viewer PATH``): a local web page that shows any episode vlui wrote, a
collected dataset's, an evaluation's or an LLM or MLLM agent's, step by step. :mod:`vlui.viewer.episodes` reads the
folders, :mod:`vlui.viewer.server` serves the page (``page.html``) and what it asks for. docs/viewer.md."""
