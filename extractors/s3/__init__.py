"""S3 pull extractor (ListObjectsV2 through boto3): buckets, prefixes and objects of AWS S3 or an S3-compatible store."""
