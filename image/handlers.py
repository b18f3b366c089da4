"""Handlers of the example image's virtual hosts: each takes a request and returns the body
(str, bytes, or a JSON value) or a Response."""


def echo(request):
    """What was asked, as JSON: method, path, headers and body."""
    return {"method": request.method, "path": request.path, "headers": request.headers,
            "body": request.body.decode("utf-8", "replace")}

