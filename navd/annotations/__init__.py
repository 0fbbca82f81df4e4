"""Metadata people write on entities: tags (Atlas' classifications are tags with attributes), a
description, a display name, user properties and namespaced custom properties, with the
history of every change. Kept apart from what extractors find (docs/features/annotations.md).

- rules.py: pure: the annotation, an edit and its checks, the changes recorded, the fields an
  annotation puts on its element document;
- store.py: the annotation and change records in the runs core, the copy on the element
  documents, and the one writer's carry-over of it;
- service.py: what the CLI (`navd annotate`, `navd entity`) and the server (/api/annotations,
  Navigator's PUT entities/{id}, Atlas' classifications) call.
"""
