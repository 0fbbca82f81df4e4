"""Create navd's cores (standalone Solr) or collections (SolrCloud) and keep their config current.

Idempotent: each configset is identified by a hash of its files. Standalone: the conf directory
is copied into the core's instance directory with the hash beside it, and the core is created
through the CoreAdmin API or reloaded when the hash changed (the old conf is restored if the new
one does not load). SolrCloud: the configset is uploaded as `<configset>-<hash>` through the
Configsets API, collections are created through the Collections API, and a changed configset
is switched in with MODIFYCOLLECTION (which reloads the collection), and switched back if
the cores reject it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import re
import shutil
import time
import zipfile
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from navd.errors import ConfigError, SolrError
from navd.index.client import SolrIndex
from navd.logs import get_logger
from navd.state import PRIVATE_DIR_MODE, make_tree_private

log = get_logger("navd.index.admin")

# Logical core -> the configset in solr_conf/ that defines it.
CONFIGSETS: dict[str, str] = {"elements": "nav_elements", "relations": "nav_relations", "runs": "nav_runs"}
HASH_FILE = "navd-configset.sha256"


@dataclasses.dataclass(frozen=True)
class InitResult:
    core: str
    action: Literal["created", "updated", "unchanged"]
    detail: str = ""


def configset_dir(configset: str, root: Path | None = None) -> Path:
    base = root if root is not None else Path(str(resources.files("navd.solr_conf")))
    path = base / configset / "conf"
    if not (path / "solrconfig.xml").is_file():
        raise ConfigError(f"configset {configset!r} not found under {base}")
    return path


def configset_hash(conf: Path) -> str:
    """A short hash of every file of a configset (names and contents)."""
    digest = hashlib.sha256()
    for file in sorted(p for p in conf.rglob("*") if p.is_file() and p.name != HASH_FILE):
        digest.update(file.relative_to(conf).as_posix().encode() + b"\0")
        digest.update(file.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def solr_mode(index: SolrIndex) -> Literal["standalone", "cloud"]:
    detected: Literal["standalone", "cloud"] = (
        "cloud" if index.system_info().get("mode") == "solrcloud" else "standalone")
    wanted = index.config.mode
    if wanted != "auto" and wanted != detected:
        raise ConfigError(f"[solr] mode is {wanted!r} but {index.base_url} runs {detected} Solr")
    return detected


def init_solr(index: SolrIndex, *, conf_root: Path | None = None) -> list[InitResult]:
    """Create or update every navd core/collection. Safe to run any number of times."""
    mode = solr_mode(index)
    results = []
    for kind, configset in CONFIGSETS.items():
        conf = configset_dir(configset, conf_root)
        name = index.core(kind)
        if mode == "cloud":
            results.append(_init_collection(index, name, configset, conf))
        else:
            results.append(_init_core(index, name, conf))
    return results


# -- standalone -------------------------------------------------------------------------------

def _core_status(index: SolrIndex, name: str) -> dict[str, Any]:
    body = index.request("GET", "admin/cores", params={"action": "STATUS", "core": name,
                                                       "indexInfo": "false"},
                         what=f"status of core {name}")
    return body.get("status", {}).get(name) or {}


#: how long `navd solr init` waits for a core Solr is still loading (right after a restart)
CORE_LOAD_SECONDS = 120.0


def _loaded_core_status(index: SolrIndex, name: str) -> dict[str, Any]:
    """The core's status once Solr has loaded it ({} if there is no such core). Right after a
    restart a core that is still loading has no instanceDir in its status yet: wait for it
    rather than take it for a core without one."""
    deadline = time.monotonic() + CORE_LOAD_SECONDS
    status = _core_status(index, name)
    while status and "instanceDir" not in status:
        if time.monotonic() > deadline:
            raise SolrError(f"core {name} of {index.base_url} is still loading after {CORE_LOAD_SECONDS:.0f} s; "
                            "run `navd solr init` again once Solr has loaded it")
        time.sleep(0.5)
        status = _core_status(index, name)
    return status


def _init_core(index: SolrIndex, name: str, conf: Path) -> InitResult:
    wanted = configset_hash(conf)
    status = _loaded_core_status(index, name)
    if not status:
        home = Path(index.system_info().get("core_root") or index.system_info()["solr_home"])
        if not home.is_dir():
            raise SolrError(f"cannot create core {name}: the Solr home {home} of {index.base_url} is "
                            f"not on this host; copy solr_conf/{conf.parent.name} there, or use SolrCloud")
        instance = home / name
        _install_conf(conf, instance / "conf", wanted)
        try:
            index.request("POST", "admin/cores", params={"action": "CREATE", "name": name,
                                                         "instanceDir": str(instance)},
                          what=f"create core {name}")
        except SolrError:
            # On a loaded host a CREATE can outlast the read timeout: the retry then finds the
            # core the first attempt made ("Core with name ... already exists"). That is done.
            if not _loaded_core_status(index, name):
                raise
        log.info("created core", core=name, configset_hash=wanted)
        return InitResult(name, "created", f"configset {wanted}")
    instance = Path(status["instanceDir"])
    current = _read_hash(instance / "conf")
    if current == wanted:
        return InitResult(name, "unchanged", f"configset {wanted}")
    if not instance.is_dir():
        raise SolrError(f"core {name} needs configset {wanted} but its instance directory {instance} "
                        f"is not on this host; copy solr_conf there and reload the core")
    backup = instance / f"conf.previous-{int(time.time())}"
    shutil.copytree(instance / "conf", backup)
    _install_conf(conf, instance / "conf", wanted)
    try:
        index.request("POST", "admin/cores", params={"action": "RELOAD", "core": name},
                      what=f"reload core {name}")
    except SolrError:
        shutil.rmtree(instance / "conf")
        backup.rename(instance / "conf")
        index.request("POST", "admin/cores", params={"action": "RELOAD", "core": name},
                      what=f"reload core {name} with its previous configset")
        raise
    shutil.rmtree(backup, ignore_errors=True)
    log.info("updated core configset", core=name, previous=current, configset_hash=wanted)
    return InitResult(name, "updated", f"configset {current or 'unknown'} -> {wanted}")


def _install_conf(source: Path, target: Path, digest: str) -> None:
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    (target / HASH_FILE).write_text(digest + "\n")
    # The package's files are 0644. A private Solr home (the embedded one, 0700) keeps
    # everything its user's alone; an external Solr's home may be read by Solr as another user.
    if target.parent.parent.stat().st_mode & 0o077 == 0:
        target.parent.chmod(PRIVATE_DIR_MODE)  # the core's instance dir, created by copytree
        make_tree_private(target)


def _read_hash(conf: Path) -> str | None:
    try:
        return (conf / HASH_FILE).read_text().strip()
    except OSError:
        return None


# -- SolrCloud --------------------------------------------------------------------------------

def _init_collection(index: SolrIndex, name: str, configset: str, conf: Path) -> InitResult:
    config_name = f"{configset}-{configset_hash(conf)}"
    status = index.request("GET", "admin/collections", params={"action": "CLUSTERSTATUS"},
                           what="SolrCloud cluster status")
    collections = status.get("cluster", {}).get("collections", {})
    existing = index.request("GET", "admin/configs", params={"action": "LIST"},
                             what="list configsets").get("configSets", [])
    if config_name not in existing:
        _upload_configset(index, config_name, conf)
    if name not in collections:
        _collections_api(index, {"action": "CREATE", "name": name, "collection.configName": config_name,
                                 "numShards": index.config.shards,
                                 "replicationFactor": index.config.replication_factor,
                                 "waitForFinalState": "true"},
                         what=f"create collection {name}")
        log.info("created collection", collection=name, configset=config_name,
                 shards=index.config.shards)
        return InitResult(name, "created", f"configset {config_name}, {index.config.shards} shard(s)")
    shards = len(collections[name].get("shards") or {})
    if shards != index.config.shards:
        # numShards counts only at CREATE; changing it later needs SPLITSHARD or a new collection.
        log.warning("collection has another number of shards than [solr] shards; navd does not "
                    "reshard", collection=name, shards=shards, configured=index.config.shards)
    previous = collections[name].get("configName")
    if previous == config_name:
        return InitResult(name, "unchanged", f"configset {config_name}")
    try:
        _switch_configset(index, name, config_name)
    except SolrError as exc:
        # The cores keep serving with the configset they had loaded, but would come up with the
        # rejected one at the next restart: switch back, as the standalone path restores conf/.
        if not previous:
            raise
        try:
            _switch_configset(index, name, previous)
        except SolrError as again:
            raise SolrError(f"{exc}; switching back to configset {previous} failed too: {again}",
                            status=exc.status) from None
        raise SolrError(f"{exc}; switched back to configset {previous}", status=exc.status) from None
    log.info("updated collection configset", collection=name, previous=previous, configset=config_name)
    return InitResult(name, "updated", f"configset {previous} -> {config_name}")


def _switch_configset(index: SolrIndex, name: str, config_name: str) -> None:
    # MODIFYCOLLECTION of collection.configName also reloads the collection (since Solr 8): a
    # RELOAD after it would load every core a second time.
    _collections_api(index, {"action": "MODIFYCOLLECTION", "collection": name,
                             "collection.configName": config_name},
                     what=f"switch collection {name} to configset {config_name}")


def _collections_api(index: SolrIndex, params: dict[str, Any], *, what: str) -> dict[str, Any]:
    """One Collections API call. Solr reports some failures (cores that reject a configset on
    reload) as HTTP 200 with a `failure` map of node -> error: those raise SolrError too."""
    body = index.request("POST", "admin/collections", params=params, what=what)
    failure = body.get("failure") or {}
    if failure:
        node, text = next(iter(failure.items()))
        message = _java_message(text)
        raise SolrError(f"{what}: {message} (node {node}){_core_failure(index, node, message)}")
    if body.get("exception"):
        raise SolrError(f"{what}: {_java_message(body['exception'].get('msg'))}")
    return body


# Solr passes node errors on as "<exception class>:Error from server at <url>: <message>".
_JAVA_PREFIX = re.compile(r"^(?:(?:[\w$]+\.)+[\w$]+:\s*)+(?:Error from server at \S+: )?")


def _java_message(text: object) -> str:
    """The message of a Java exception's text, on one line, without the class names."""
    return _JAVA_PREFIX.sub("", " ".join(str(text).split()))[:500] or "failed"


def _core_failure(index: SolrIndex, node: str, message: str) -> str:
    """Why the core named in "Unable to reload core [<core>]" failed, as ": <reason>", when it
    is on the node we talk to (the Collections API does not say), else ""."""
    core = re.search(r"core \[([^\]]+)\]", message)
    if core is None:
        return ""
    try:
        if index.system_info().get("node") != node:
            return ""  # another node: its log has the reason
        failures = index.request("GET", "admin/cores", params={"action": "STATUS", "core": core.group(1),
                                                               "indexInfo": "false"},
                                 what=f"status of core {core.group(1)}").get("initFailures", {})
    except SolrError:
        return ""
    reason = failures.get(core.group(1))
    return f": {_java_message(reason)}" if reason else ""


def _upload_configset(index: SolrIndex, name: str, conf: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(p for p in conf.rglob("*") if p.is_file()):
            archive.write(file, file.relative_to(conf).as_posix())
    index.request("POST", "admin/configs", params={"action": "UPLOAD", "name": name},
                  data=buffer.getvalue(), headers={"Content-Type": "application/octet-stream"},
                  what=f"upload configset {name}")
