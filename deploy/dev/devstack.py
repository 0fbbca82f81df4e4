"""The local development services under .dev/, and .dev/navd.toml pointing navd at them.

    python deploy/dev/devstack.py up     # start (idempotent) and write .dev/navd.toml
    python deploy/dev/devstack.py down   # stop

The stack: Solr, a real HDFS (NameNode + DataNode from Hadoop's Maven jars, WebHDFS on), a
standalone Hive metastore and Spark's Thrift Server as HiveServer2 over it, its warehouse on the
HDFS (its event log is where the Spark extractor finds the SQL text of what ran through it; PySpark
jobs share the metastore with `spark.hadoop.hive.metastore.uris`), and YARN (a ResourceManager and
a NodeManager; `.dev/hadoop-conf/` is the client configuration: `HADOOP_CONF_DIR=$PWD/.dev/hadoop-conf
spark-submit --master yarn ...`).
Ports: Solr 8984 (so it does not clash with `navd quickstart` on 8983), metastore 9083,
Thrift Server 10015, YARN Hadoop's defaults (RM 8032/8030/8031/8033, web/REST 8088, NM 8041/8042/8040),
HDFS Hadoop's defaults (NameNode RPC 8020, HTTP/WebHDFS 9870, DataNode 9866/9864/9867);
override with DEV_SOLR_PORT, DEV_METASTORE_PORT, DEV_THRIFT_PORT, DEV_HDFS_RPC_PORT, DEV_HDFS_HTTP_PORT.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from navd.config import load_config
from navd.extractors.hdfs.settings import HdfsConfig
from navd.errors import NavdError
from navd.index.admin import init_solr
from navd.index.client import SolrIndex
from navd.logs import setup_logging
from navd.solr.server import EmbeddedSolr, SolrDistribution, effective_solr_config
from navd.webhdfs import make_client
from navd_devstack.hadoop import DevHdfs, HdfsPorts
from navd_devstack.metastore import HiveMetastore
from navd_devstack.spark_thrift import SparkThriftServer
from navd_devstack.yarn import DevYarn, YarnPorts

REPO = Path(__file__).resolve().parents[2]
DEV = REPO / ".dev"
CONFIG = DEV / "navd.toml"


def solr_server() -> EmbeddedSolr:
    defaults = load_config(None, environ={}).solr.embedded
    port = int(os.environ.get("DEV_SOLR_PORT", "8984"))
    return EmbeddedSolr(DEV / "solr", port, defaults.heap,
                        SolrDistribution(defaults.version, defaults.dist_path))


WAREHOUSE = "/user/hive/warehouse"


def metastore(hdfs: DevHdfs) -> HiveMetastore:
    return HiveMetastore(DEV / "metastore", int(os.environ.get("DEV_METASTORE_PORT", "9083")),
                         warehouse=f"{hdfs.default_fs}{WAREHOUSE}")


def thrift_server(hdfs: DevHdfs, hms: HiveMetastore) -> SparkThriftServer:
    return SparkThriftServer(DEV / "spark-thrift", int(os.environ.get("DEV_THRIFT_PORT", "10015")),
                             event_log_dir=DEV / "spark-events", metastore_uri=hms.uri,
                             warehouse=f"{hdfs.default_fs}{WAREHOUSE}")


def hdfs_cluster() -> DevHdfs:
    ports = HdfsPorts.dev_defaults()
    ports = HdfsPorts(rpc=int(os.environ.get("DEV_HDFS_RPC_PORT", ports.rpc)),
                      http=int(os.environ.get("DEV_HDFS_HTTP_PORT", ports.http)),
                      datanode=ports.datanode, datanode_http=ports.datanode_http, datanode_ipc=ports.datanode_ipc)
    return DevHdfs(DEV / "hdfs", ports)


def yarn_cluster(hdfs: DevHdfs) -> DevYarn:
    return DevYarn(DEV / "yarn", YarnPorts.dev_defaults(), hdfs, conf_dir=DEV / "hadoop-conf")


def write_config(solr: EmbeddedSolr, thrift: SparkThriftServer, hdfs: DevHdfs, yarn: DevYarn) -> None:
    CONFIG.write_text(
        "# Written by `make dev-up`: navd pointed at the development services under .dev/.\n"
        "# Use it with: export NAVD_CONFIG=$PWD/.dev/navd.toml\n\n"
        "[cluster]\nname = \"primary\"\n\n"
        "[logging]\nformat = \"auto\"\n\n"
        f"[solr.embedded]\nhome = \"{solr.home}\"\nport = {solr.port}\n\n"
        f"[hdfs]\nenabled = true\nurls = [\"{hdfs.webhdfs_url}\"]\ndefault_fs = \"{hdfs.default_fs}\"\n"
        f"user = \"{hdfs.superuser}\"\n\n"
        f"[hive]\nenabled = true\nhost = \"127.0.0.1\"\nport = {thrift.port}\n\n"
        f"[yarn]\nenabled = true\nurls = [\"{yarn.rm_url}\"]\n\n"
        f"[spark]\nenabled = true\nevent_log_dirs = [\"{thrift.event_log_dir}\"]\n"
    )


def up() -> None:
    DEV.mkdir(exist_ok=True)
    solr = solr_server()
    status = solr.start()
    print(f"solr: running {status.solr_version} on {status.url} (home {status.home})")
    hdfs = hdfs_cluster()
    hdfs.start()
    print(f"hdfs: NameNode {hdfs.default_fs}, WebHDFS {hdfs.webhdfs_url} (home {hdfs.home})")
    # As on a real cluster: a warehouse and a /tmp every user may write to (HiveServer2 acts as
    # the connecting user), the sticky bit keeping users' files their own.
    superuser = make_client(HdfsConfig(urls=(hdfs.webhdfs_url,), user=hdfs.superuser))
    for shared in (WAREHOUSE, "/tmp"):
        superuser.makedirs(shared)
        superuser.set_permission(shared, "1777")
    hms = metastore(hdfs)
    hms.start()
    print(f"hive: metastore {hms.uri} (warehouse {hdfs.default_fs}{WAREHOUSE})")
    thrift = thrift_server(hdfs, hms)
    thrift.start()
    print(f"hive: Spark Thrift Server (HiveServer2) on 127.0.0.1:{thrift.port}, "
          f"event log {thrift.event_log_dir}")
    yarn = yarn_cluster(hdfs)
    yarn.start()
    print(f"yarn: ResourceManager {yarn.rm_url}, client configuration {yarn.conf_dir} "
          f"(HADOOP_CONF_DIR for spark-submit --master yarn)")
    write_config(solr, thrift, hdfs, yarn)
    config = load_config(str(CONFIG), environ={})
    with SolrIndex(effective_solr_config(config, solr)) as index:
        for result in init_solr(index):
            print(f"solr: {result.core} {result.action}")
    print(f"config: {CONFIG}  (export NAVD_CONFIG={CONFIG})")


def down() -> None:
    hdfs = hdfs_cluster()
    hms = metastore(hdfs)
    print("yarn: stopped" if yarn_cluster(hdfs).stop() else "yarn: was not running")
    print("hive: stopped" if thrift_server(hdfs, hms).stop() else "hive: was not running")
    print("metastore: stopped" if hms.stop() else "metastore: was not running")
    print("hdfs: stopped" if hdfs_cluster().stop() else "hdfs: was not running")
    print("solr: stopped" if solr_server().stop() else "solr: was not running")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["up", "down"])
    args = parser.parse_args()
    setup_logging("console" if sys.stderr.isatty() else "json", "warning")
    try:
        up() if args.action == "up" else down()
    except NavdError as exc:
        print(f"devstack: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
