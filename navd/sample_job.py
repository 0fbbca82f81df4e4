"""The quickstart's pipeline, a real PySpark job showing lineage across temporary tables: two
source tables, two temporary tables filtered from them, one merge, the temporaries dropped.

Run by `navd quickstart` (navd/sample.py) as `python -m navd.sample_job --root DIR`, locally
(`local[1]`, no spark-submit, the venv's PySpark), with event logs on in DIR/spark-events: what
navd's Spark extractor reads afterwards, as it reads any job's. Each statement carries its SQL
as the job description, as Spark's Thrift Server (and Hue through it) does, so the operations
show their query text.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

APP_NAME = "navd quickstart: sample_merge"
COLUMNS = "code STRING, description STRING, total_emp INT, salary INT"
SELECTED = "code, description, total_emp, salary"

#: The pipeline, in order (on a cluster the temporary tables live between two of navd's metastore
#: extractions; here navd reads the whole log afterwards, so both are known only from it).
STATEMENTS: tuple[str, ...] = (
    f"CREATE TABLE sample_07 ({COLUMNS}) USING parquet",
    f"CREATE TABLE sample_08 ({COLUMNS}) USING parquet",
    "INSERT INTO sample_07 VALUES ('00-0000', 'All Occupations', 134354250, 40690), "
    "('11-1011', 'Chief executives', 299160, 151370), ('35-2014', 'Cooks, restaurant', 739070, 21330)",
    "INSERT INTO sample_08 VALUES ('00-0000', 'All Occupations', 135185230, 42270), "
    "('11-1011', 'Chief executives', 301930, 160440), ('29-1111', 'Registered nurses', 2530220, 65130)",
    f"CREATE TABLE sample_merge ({COLUMNS}) USING parquet",
    f"CREATE TABLE temp_sample_07 USING parquet AS SELECT {SELECTED} FROM sample_07 WHERE salary > 30000",
    f"CREATE TABLE temp_sample_08 USING parquet AS SELECT {SELECTED} FROM sample_08 WHERE salary > 30000",
    "INSERT INTO sample_merge SELECT * FROM temp_sample_07 UNION ALL SELECT * FROM temp_sample_08",
    "DROP TABLE temp_sample_07",
    "DROP TABLE temp_sample_08",
)


def run(root: Path) -> None:
    """The pipeline with its warehouse in `root`/warehouse and its event log in
    `root`/spark-events. The catalog is Spark's in-memory one (no metastore to set up), so the
    warehouse starts empty each time: a table directory left by a previous run would refuse the
    CREATE."""
    from pyspark.sql import SparkSession  # noqa: PLC0415 - only in the job's own process

    warehouse, events = root / "warehouse", root / "spark-events"
    shutil.rmtree(warehouse, ignore_errors=True)
    events.mkdir(parents=True, exist_ok=True)
    spark = (SparkSession.builder.master("local[1]").appName(APP_NAME)
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "1")
             .config("spark.sql.catalogImplementation", "in-memory")
             .config("spark.sql.warehouse.dir", str(warehouse))
             .config("spark.eventLog.enabled", "true")
             .config("spark.eventLog.dir", str(events))
             .getOrCreate())
    try:
        context = spark.sparkContext
        context.setLogLevel("WARN")
        for statement in STATEMENTS:
            context.setJobDescription(statement)
            spark.sql(statement).collect()
        context.setJobDescription(None)  # type: ignore[arg-type]
    finally:
        spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, type=Path, help="directory for the warehouse and the event log")
    run(parser.parse_args().root)


if __name__ == "__main__":
    main()
