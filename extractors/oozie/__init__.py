"""Oozie pull extractor (Oozie's REST API): workflows and coordinators, their runs and actions, linked to the YARN applications the actions started."""
