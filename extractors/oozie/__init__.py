"""Oozie pull extractor (Oozie's REST API): workflows, coordinators and bundles, their runs and actions, linked to the YARN applications the actions started."""
