"""navd's embedded Solr 9 server: fetched from Maven Central, run as a separate JVM."""
