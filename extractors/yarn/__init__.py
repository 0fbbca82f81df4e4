"""YARN pull extractor (ResourceManager REST): applications as operation executions, linked to the Spark runs they were."""
