"""Drop sphinx-thebe's scripts from every page.

Jupyter Book v1 always loads sphinx-thebe, which registers its inline configuration script once per
`env-before-read-docs` event; with our build that happens twice, and the second `const THEBE_JS_URL`
is a SyntaxError in the browser console. The book has no live-code cells, so thebe is removed entirely
(which also removes its reference to a CDN)."""


def _is_thebe(script) -> bool:
    name = getattr(script, "filename", None) or str(script)
    body = getattr(script, "attributes", {}).get("body", "") if hasattr(script, "attributes") else ""
    return "thebe" in (name or "").lower() or "THEBE" in body


def _strip(app, pagename, templatename, context, doctree):
    if "script_files" in context:
        context["script_files"] = [s for s in context["script_files"] if not _is_thebe(s)]


def setup(app):
    app.connect("html-page-context", _strip, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
