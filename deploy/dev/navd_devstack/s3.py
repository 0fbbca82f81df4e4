"""A real S3-protocol server for development and tests: moto's server, in a process of its own.

moto (`moto[server]`, on PyPI) implements S3's REST protocol (SigV4, ListObjectsV2 with
delimiters, StartAfter, continuation tokens and URL-encoded keys, multipart uploads, directory
markers) well enough that boto3 and Hadoop's S3A connector (hadoop-aws) use it as they use AWS;
it keeps buckets in memory, so a restart starts empty. `DevS3` runs it from its home
(`python -m navd_devstack.s3 --home HOME --port PORT`, bound to 127.0.0.1), request logging
off, and waits until it answers. Any access key and secret are accepted; `credentials()` gives
the pair the tests use. A benchmark's bucket of hundreds of thousands of objects is preloaded
into the server's memory at start (`preload`: a JSON-lines file of bucket, key and size): as
many PUT requests would take longer than the benchmark. `hadoop_aws_jars()` fetches hadoop-aws (the version of PySpark's own
hadoop-client-api jar) and its AWS SDK from Maven Central once into navd's cache, for Spark
jobs that read and write `s3a://`.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import sys
import threading
from pathlib import Path
from typing import Any

import requests

from navd.config import default_solr_dist_dir
from navd.jvm import fetch_maven_jars
from navd.logs import get_logger
from navd.process import ManagedProcess
from navd_devstack.errors import DevServiceError
from navd_devstack.hadoop import jvm_resource
from navd_devstack.spark_thrift import spark_home

log = get_logger("navd_devstack.s3")
#: the launcher's module: what identifies the process, with its home, in its command line
LAUNCHER = "navd_devstack.s3"
ACCESS_KEY = "navd-dev-access"
SECRET_KEY = "navd-dev-secret"
REGION = "us-east-1"


class DevS3:
    """moto's S3 server on 127.0.0.1:`port`, its pid file and log in `home`."""

    def __init__(self, home: Path, port: int, *, preload: Path | None = None) -> None:
        self.home = home.expanduser().resolve()
        self.port = port
        self.preload = preload.resolve() if preload is not None else None
        self.process = ManagedProcess("s3", self.home, LAUNCHER, DevServiceError)

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_file(self) -> Path:
        return self.home / "s3.log"

    @staticmethod
    def credentials() -> tuple[str, str]:
        """(access key, secret key): moto takes any; these are the ones the dev tools use."""
        return ACCESS_KEY, SECRET_KEY

    def client(self, **config: Any) -> Any:
        """A boto3 client of this server (path-style, as S3-compatible stores are addressed)."""
        import boto3  # noqa: PLC0415
        from botocore.config import Config  # noqa: PLC0415

        return boto3.client("s3", endpoint_url=self.endpoint_url, aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET_KEY, region_name=REGION,
                            config=Config(s3={"addressing_style": "path"}, **config))

    def start(self, timeout: float = 60.0) -> None:
        """Start unless already running from this home; wait until it answers S3 requests."""
        self.home.mkdir(parents=True, exist_ok=True)
        self.process.ensure_running(self._spawn, self._ready, ports=(self.port,), timeout=timeout,
                                    log_file=self.log_file)
        log.info("S3 server is up", endpoint=self.endpoint_url, home=str(self.home))

    def stop(self) -> bool:
        return self.process.stop(timeout=30)

    def _spawn(self) -> Any:
        cmd = [sys.executable, "-m", LAUNCHER, "--home", str(self.home), "--port", str(self.port)]
        if self.preload is not None:
            cmd += ["--preload", str(self.preload)]
        return self.process.spawn(cmd, log_file=self.log_file, record={"port": self.port})

    def _ready(self) -> str | None:
        try:
            # any answer (an unsigned ListBuckets: 200 or 403) means the dispatcher is up; not
            # /moto-api/data.json, which serialises every object held
            requests.get(f"{self.endpoint_url}/", timeout=3)
        except requests.RequestException:
            return f"the S3 server on port {self.port} to answer"
        return None

    def spark_conf(self) -> dict[str, str]:
        """Spark settings for `s3a://` paths on this server (with `hadoop_aws_jars()` on the class path)."""
        return {
            "spark.hadoop.fs.s3a.endpoint": self.endpoint_url,
            "spark.hadoop.fs.s3a.endpoint.region": REGION,
            "spark.hadoop.fs.s3a.path.style.access": "true",
            "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
            "spark.hadoop.fs.s3a.access.key": ACCESS_KEY,
            "spark.hadoop.fs.s3a.secret.key": SECRET_KEY,
            "spark.hadoop.fs.s3a.aws.credentials.provider":
                "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        }


# -- hadoop-aws for Spark -------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class HadoopAwsJars:
    """hadoop-aws of one Hadoop version and its AWS SDK bundle, under navd's cache."""

    version: str
    cache_dir: Path = dataclasses.field(default_factory=default_solr_dist_dir)

    @property
    def root(self) -> Path:
        pom = hashlib.sha256(jvm_resource("hadoop-aws-pom.xml").read_bytes()).hexdigest()[:8]
        return self.cache_dir / f"hadoop-aws-{self.version}-{pom}"

    def ensure(self) -> list[Path]:
        fetch_maven_jars(jvm_resource("hadoop-aws-pom.xml"), self.root, {"hadoop.version": self.version},
                         what=f"hadoop-aws {self.version}", error=DevServiceError)
        return sorted((self.root / "lib").glob("*.jar"))


def pyspark_hadoop_version(jars: Path | None = None) -> str:
    """The Hadoop version PySpark ships (its hadoop-client-api jar): hadoop-aws must match it."""
    found = sorted((jars or spark_home() / "jars").glob("hadoop-client-api-*.jar"))
    if not found:
        raise DevServiceError(f"no hadoop-client-api jar in {jars or spark_home() / 'jars'}: cannot tell "
                              "which hadoop-aws PySpark needs")
    return found[-1].name.removeprefix("hadoop-client-api-").removesuffix(".jar")


def hadoop_aws_jars() -> list[Path]:
    """hadoop-aws and the AWS SDK for PySpark's Hadoop, fetched once (`spark.jars`)."""
    return HadoopAwsJars(pyspark_hadoop_version()).ensure()


# -- the launcher ---------------------------------------------------------------------------------

def _preload(path: Path) -> None:
    """Objects straight into moto's in-memory store (bucket, key, size per JSON line), before
    the server answers."""
    import json  # noqa: PLC0415

    from moto.core import DEFAULT_ACCOUNT_ID  # noqa: PLC0415
    from moto.s3.models import s3_backends  # noqa: PLC0415

    backend = s3_backends[DEFAULT_ACCOUNT_ID]["global"]
    buckets: set[str] = set()
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            if item["bucket"] not in buckets:
                backend.create_bucket(item["bucket"], REGION)
                buckets.add(item["bucket"])
            backend.put_object(item["bucket"], item["key"], b"x" * int(item.get("size", 0)))


def _serve(port: int, preload: Path | None) -> None:
    from moto.server import ThreadedMotoServer  # noqa: PLC0415

    if preload is not None:
        _preload(preload)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    threading.Event().wait()  # until SIGTERM (DevS3.stop)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=LAUNCHER, description="moto's S3 server for navd's tests")
    parser.add_argument("--home", required=True, help="the server's home (in its command line: its identity)")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--preload", type=Path, help="JSON lines {bucket, key, size} to hold before answering")
    args = parser.parse_args(argv)
    _serve(args.port, args.preload)


if __name__ == "__main__":
    main()
