"""HTTP service of the address autocomplete: Falcon under gunicorn (see ``server.app``)."""
