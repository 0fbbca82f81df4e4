"""navd's development and test services: a real HDFS and YARN (Hadoop's Maven jars), a
standalone Hive metastore and Spark's Thrift Server (the pyspark jars).

A distribution of its own (`navd-devstack`, deploy/dev/pyproject.toml) so that installing navd
installs none of it; `make setup-test` installs it editable beside navd for `make dev-up`, the tests
and the benchmarks. It may import navd; navd never imports it.
"""
