"""What a handler declares: the registry of handlers and their defaults (``registry``),
the context a handler runs with (``context``) and its limits (``limits``). Producers read
the defaults; workers and Lambda handlers run the handlers.
"""
