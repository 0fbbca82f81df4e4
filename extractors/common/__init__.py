"""Pieces every push extractor that tails log files shares, free of any one source's rules.

tailing: the file system seam (local, WebHDFS, routing by URI scheme); codecs: incremental
decoders of compressed logs; lines: complete lines after a durable cursor; cursors: the cursor
store; deletions: the fail-safe every extractor that flags deletions goes through.
"""
