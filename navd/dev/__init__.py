"""Development and test services navd starts itself (Spark Thrift Server; HDFS and YARN later)."""
