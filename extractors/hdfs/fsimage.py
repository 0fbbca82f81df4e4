"""One line of an fsimage dump (`hdfs oiv -p Delimited`) -> HdfsEntry (pure: no I/O).

The format, as Hadoop 3.5.0's OfflineImageViewerPB writes it (PBImageDelimitedTextWriter, seen
on the dev HDFS and in its source):

    Path  Replication  ModificationTime  AccessTime  PreferredBlockSize  BlocksCount  FileSize
    NSQUOTA  DSQUOTA  Permission  UserName  GroupName

- Twelve columns, tab-separated unless `-delimiter` says otherwise; the first line is the header
  above (its first column is the word `Path`, never an absolute path).
- Times are `yyyy-MM-dd HH:mm` in the oiv JVM's default time zone: minute precision, seconds and
  milliseconds truncated, and no option of 3.5 prints more. Run oiv with TZ=UTC (or
  -Duser.timezone=UTC) or pass the zone it ran in. Directories have no access time: the epoch.
- Permission is `ls`-style with a type letter, `d` for directories and `-` for files and
  symlinks (sticky bit as `t`/`T`), and a `+` suffix when the inode has an ACL.
- Directories have replication, block size, blocks and size 0 and their quotas in the NSQUOTA
  and DSQUOTA columns; symlinks have 0 in every numeric column, so a non-directory whose
  preferred block size is 0 is a symlink (a file always has one: HDFS refuses a 0 block size).
- Snapshots do not appear: only the current tree, as WebHDFS lists it.
- Text columns go through commons-text `escapeCsv`: a value holding `,` `"` CR or LF is quoted,
  with `""` for `"`; inside such a value CRLF is then written `%x0D%x0A` and a lone LF `%x0A`.
  A tab (or the delimiter) is NOT escaped, so only the path, the first column, can hold it and
  the other eleven columns are split off from the right.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo

from navd.extractors.hdfs.records import BadEntry, HdfsEntry

COLUMNS: tuple[str, ...] = ("Path", "Replication", "ModificationTime", "AccessTime", "PreferredBlockSize",
                            "BlocksCount", "FileSize", "NSQUOTA", "DSQUOTA", "Permission", "UserName",
                            "GroupName")
DEFAULT_DELIMITER = "\t"
_TIME_FORMAT = "%Y-%m-%d %H:%M"
_QUOTE = '"'


def _line_for_message(line: str) -> str:
    return repr(line if len(line) <= 200 else line[:200] + "...")


def unescape(field: str) -> str:
    """Undo oiv's escapeCsv and its %x0D%x0A / %x0A line-break spelling.

    Only quoted values are decoded: oiv quotes every value it changes, so `%x0A` in an unquoted
    path is the name's own text. (A quoted value that holds `%x0A` as text, next to a comma, is
    ambiguous in the format itself; it is read as a line break.)"""
    if len(field) < 2 or field[0] != _QUOTE or field[-1] != _QUOTE:
        return field
    inner = field[1:-1].replace('""', '"')
    if "%x0" in inner:
        inner = inner.replace("%x0D%x0A", "\r\n").replace("%x0A", "\n")
    return inner


def is_header(line: str, delimiter: str = DEFAULT_DELIMITER) -> bool:
    return line.split(delimiter, 1)[0] == COLUMNS[0]


def _millis(value: str, tz: tzinfo) -> int:
    # "No time" (a directory's access time) is the epoch, written in the same zone: back to 0.
    moment = datetime.strptime(value, _TIME_FORMAT).replace(tzinfo=tz)
    return int(moment.timestamp()) * 1000


def parse_line(line: str, *, delimiter: str = DEFAULT_DELIMITER, tz: tzinfo = UTC) -> HdfsEntry | None:
    """The entry of one dump line (without its line break); None for the header line.

    Raises BadEntry naming the line for anything else that is not a row of the format."""
    if not line:
        raise BadEntry("empty line in the fsimage dump")
    fields = line.rsplit(delimiter, len(COLUMNS) - 1)
    if len(fields) != len(COLUMNS):
        if is_header(line, delimiter):
            return None
        raise BadEntry(f"fsimage dump line {_line_for_message(line)}: {len(fields)} columns, "
                       f"expected {len(COLUMNS)} separated by {delimiter!r}")
    raw_path = fields[0]
    if raw_path == COLUMNS[0]:
        return None
    path = unescape(raw_path)
    if not path.startswith("/"):
        raise BadEntry(f"fsimage dump line {_line_for_message(line)}: path {path!r} is not absolute")
    (replication, modified, accessed, block_size, _blocks, size, _ns_quota, _ds_quota, permission,
     owner, group) = fields[1:]
    permission = unescape(permission)
    kind, mode = permission[:1], permission[1:].removesuffix("+")
    if kind not in ("d", "-") or len(mode) != 9:
        raise BadEntry(f"{path}: fsimage dump line {_line_for_message(line)}: permission "
                       f"{permission!r} is not like drwxr-xr-x")
    try:
        preferred_block_size = int(block_size)
        return HdfsEntry(
            path=path.rstrip("/") or "/", is_dir=kind == "d", owner=unescape(owner), group=unescape(group),
            permissions=mode, size=int(size), replication=int(replication), block_size=preferred_block_size,
            modified_ms=_millis(modified, tz), accessed_ms=_millis(accessed, tz),
            # Not in the format; see the module docstring of extractors/hdfs/bulk.py.
            file_id=None,
            symlink=kind == "-" and preferred_block_size == 0,
        )
    except ValueError as exc:
        raise BadEntry(f"{path}: fsimage dump line {_line_for_message(line)}: {exc}") from None
