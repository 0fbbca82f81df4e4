"""HDFS pull extractor: WebHDFS crawl (full and incremental), deletions, fsimage bulk load."""
