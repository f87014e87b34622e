"""Changes as control planes export them, one JSON document a file: an `ecs` service description
(`aws ecs describe-services`, each `deployments[]` entry a deployment), a `cloudtrail` log (each
mutating call a change), a `route53` change batch (a `dns` change of the record names) and
`certificates`, cert-manager objects as `kubectl get … -o json` writes them (each issued request a
`certificate` change of the certificate's first DNS name).

Part of the change-file family of `tools.formats.ledgers`, which detects these formats and holds
their parsers in its `PARSERS`. The conventions are the family's: every change keeps the offsets of
the record that states it, a stamp without a zone is read in the manifest's `timezone` (else UTC),
a file not of its format's shape is refused naming where (`shape.ContentError`), and a record that
is there but cannot be read is kept as unparsed text.
"""

from __future__ import annotations

import re
from datetime import timezone

from state.change import ConfigChange
from state.telemetry import Change, Unparsed, as_text
from tools.formats import jsonspan
from tools.formats.logs import time_field
from tools.formats.records import ENV_FAMILIES, Rec, obj, read_records
from tools.formats.shape import ContentError, bad_json, expecting, listed

_ECS = "`aws ecs describe-services` JSON: services a list of service objects"
_ECS_SERVICE = ("an ECS service object (serviceName text; deployments a list of objects with id, taskDefinition "
                "text and createdAt a time)")
_TRAIL = "a CloudTrail log: Records a list of event objects (eventName text, eventTime a time), or JSON lines of them"
_TRAIL_RECORD = ("a CloudTrail event object (eventName, eventSource and eventID text; eventTime a time; "
                 "requestParameters and responseElements objects)")
_R53 = ("a Route 53 change: ChangeInfo an object (Id text, SubmittedAt a time, Comment text) and ChangeBatch an "
        "object whose Changes are a list")
_R53_CHANGE = ("a Route 53 change object (Action text; ResourceRecordSet an object with Name and Type text, "
               "ResourceRecords a list of {Value} objects)")
_CERTS = ("cert-manager objects as `kubectl get certificates,certificaterequests -o json` writes them: items a list "
          "of objects (or one Certificate or CertificateRequest object)")
_CERT = ("a cert-manager object (kind text; metadata an object with name text and creationTimestamp a time; spec an "
         "object with dnsNames a list of text and issuerRef an object)")


def _strip_env(name: str, environment: str) -> str:
    """`checkout-prod` → `checkout` (the file's environment, or any usual environment word)."""
    words = {environment.lower()} | {w for f in ENV_FAMILIES for w in f}
    for sep in ("-", "_", "."):
        head, _, tail = name.rpartition(sep)
        if head and tail.lower() in words:
            return head
    return name


def parse_ecs(text: str, service: str, environment: str, tz: timezone | None = None
              ) -> tuple[list[Change], list[Unparsed]]:
    """`aws ecs describe-services`: every deployment of every service."""
    doc = _json(text)
    if doc.kind != "object" or "services" not in doc.keys:
        raise ContentError("<document>", _ECS, doc.start)
    out: list[Change] = []
    bad: list[Unparsed] = []
    for i, s in enumerate(listed(doc.get("services"), "services", _ECS)):
        if s.kind != "object":
            raise ContentError(f"services[{i}]", _ECS_SERVICE, s.start)
        with expecting(f"services[{i}]", _ECS_SERVICE, s.start):
            sv = s.value
            name = as_text(sv.get("serviceName") or "")
            svc = _strip_env(name, environment) or service or "*"  # what the file says first
            for d in listed(s.get("deployments"), f"services[{i}].deployments", _ECS_SERVICE):
                v = d.value if isinstance(d.value, dict) else {}
                began = time_field(v.get("createdAt"), tz)
                if began is None:
                    bad.append(Unparsed(start=d.start, end=d.end, reason="an ECS deployment with createdAt"))
                    continue
                state = as_text(v.get("rolloutState") or v.get("status") or "")
                done = time_field(v.get("updatedAt"), tz) if state.upper() in ("COMPLETED", "PRIMARY", "") else None
                task = as_text(v.get("taskDefinition") or "")
                rev = task.rsplit(":", 1)[1] if ":" in task.rsplit("/", 1)[-1] else None
                cid = as_text(v.get("id") or "").rsplit("/", 1)[-1] or f"{svc}@ecs-{rev}"
                out.append(Change(start=d.start, end=d.end, id=cid, type="deployment", service=svc,
                                  environment=environment, started_at=began,
                                  completed_at=done if done and done >= began else None, version_to=rev, revision=rev,
                                  summary=f"{name} {as_text(v.get('status'))} {state} {task.rsplit('/', 1)[-1]}".strip()))
    return out, bad


def _json(text: str) -> jsonspan.J:
    """One JSON document; a syntax error names its offset (a ContentError: a change file's caller turns
    a ValueError into a vaguer message)."""
    try:
        return jsonspan.parse(text)
    except jsonspan.JSONSpanError as exc:
        raise bad_json(exc.pos) from None


_READ_ONLY = re.compile(r"^(Describe|Get|List|Lookup|Head|Check|Search|Batch(Get|Describe))")
_VERB = re.compile(r"^[A-Z][a-z]+")
_ID_KEY = re.compile(r"(.+?)(?:identifier|id|name)")


def parse_cloudtrail(text: str, service: str, environment: str, tz: timezone | None = None
                     ) -> tuple[list[Change], list[Unparsed]]:
    """CloudTrail `Records[]`: every call that changes something (not Describe/Get/List …)."""
    out: list[Change] = []
    recs, broken = read_records(text, _TRAIL, keys=("Records",), one=lambda v: "eventName" in v or "eventTime" in v)
    bad = [Unparsed(start=s, end=e, reason=r) for s, e, r in broken]
    for rec in recs:
        with expecting(rec.where, _TRAIL_RECORD, rec.start):
            _trail_change(rec, service, environment, tz, out, bad)
    return out, bad


def _trail_change(rec: Rec, service: str, environment: str, tz: timezone | None,
                  out: list[Change], bad: list[Unparsed]) -> None:
    """One CloudTrail record: a change when the call changes something, unparsed when it is no call."""
    v = rec.value if isinstance(rec.value, dict) else {}
    name = as_text(v.get("eventName") or "")
    at = time_field(v.get("eventTime"), tz)
    if not name or at is None:
        bad.append(Unparsed(start=rec.start, end=rec.end, reason="a CloudTrail record with eventName and eventTime"))
        return
    if _READ_ONLY.match(name) or v.get("readOnly") is True or as_text(v.get("errorCode") or ""):
        return  # a read, or a call the service refused: nothing changed
    params = obj(v.get("requestParameters"))
    arn = next((as_text(x) for k, x in params.items() if k.lower().endswith("arn") and isinstance(x, str)), "")
    lb = re.search(r"/(?:app|net|gwy)/([^/]+)/", arn)
    target = lb.group(1) if lb else (re.split(r"[:/]", arn)[-1] if arn else _acted_on(name, params))
    blob = f"{name} {params}".lower()
    kind = ("certificate" if re.search(r"ssl|certificate|tls", blob) else "dns" if "route53" in
            as_text(v.get("eventSource")) else "infrastructure")
    diffs = _cloudtrail_diffs(v)
    stamp = at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H%M%SZ")
    cid = as_text(v.get("eventID") or "") or f"cloudtrail-{name}-{stamp}"
    out.append(Change(start=rec.start, end=rec.end, id=cid, type=kind, service=target or service,
                      target=target or None,
                      environment=environment, started_at=at, completed_at=at, config_changes=diffs,
                      summary=f"{as_text(v.get('eventSource'))} {name} {target or ''}".strip()))


def _acted_on(name: str, params: dict) -> str | None:
    """The resource a call names by identifier rather than ARN: the request parameter `<type>Id`,
    `<type>Identifier` or `<type>Name` whose type is the one the call's name acts on
    (`ModifyReplicationGroup` → `replicationGroupId`, `PutBucketPolicy` → `bucketName`); the longest such
    type wins. None when no parameter names the call's own type (the file's service stands then)."""
    acts_on = _VERB.sub("", name, count=1).lower()
    found: list[tuple[int, str]] = []
    for key, value in params.items():
        m = _ID_KEY.fullmatch(key.lower())
        if m and isinstance(value, str) and value.strip() and acts_on.startswith(m.group(1)):
            found.append((len(m.group(1)), value.strip()))
    return max(found)[1] if found else None


def _cloudtrail_diffs(v: dict) -> tuple[ConfigChange, ...]:
    out = []
    resp = v.get("responseElements")
    for part in (resp.get(k) for k in resp) if isinstance(resp, dict) else []:
        for item in part if isinstance(part, list) else [part]:
            if not isinstance(item, dict):
                continue
            for k, new in item.items():
                prev = item.get("previous" + k[:1].upper() + k[1:])
                if prev is not None and not k.startswith("previous"):
                    out.append(ConfigChange(key=k, from_=as_text(prev), to=as_text(new)))
    return tuple(out)


def parse_route53(text: str, service: str, environment: str, tz: timezone | None = None
                  ) -> tuple[list[Change], list[Unparsed]]:
    """A Route 53 change: `ChangeInfo` (id, SubmittedAt, Comment) and `ChangeBatch.Changes[]`."""
    doc = _json(text)
    info_node = doc.get("ChangeInfo")
    if info_node is None:
        raise ContentError("<document>", _R53, doc.start)
    if info_node.kind != "object":
        raise ContentError("ChangeInfo", _R53, info_node.start)
    batch = doc.get("ChangeBatch")
    if batch is not None and batch.kind != "object" and not (batch.kind == "literal" and batch.raw is None):
        raise ContentError("ChangeBatch", _R53, batch.start)
    changes = listed(batch.get("Changes") if batch is not None else None, "ChangeBatch.Changes", _R53)
    info = info_node.value
    at = time_field(info.get("SubmittedAt"), tz)
    if at is None:
        return [], [Unparsed(start=doc.start, end=doc.end, reason="a Route 53 change with ChangeInfo.SubmittedAt")]
    names: list[str] = []
    diffs: list[ConfigChange] = []
    for i, c in enumerate(changes):
        rrs = c.value.get("ResourceRecordSet") if c.kind == "object" else None
        if not isinstance(rrs, dict):
            raise ContentError(f"ChangeBatch.Changes[{i}]", _R53_CHANGE, c.start)
        with expecting(f"ChangeBatch.Changes[{i}]", _R53_CHANGE, c.start):
            if not rrs.get("Name"):
                continue
            name = as_text(rrs["Name"]).rstrip(".")
            names.append(name) if name not in names else None
            vals = ",".join(as_text(r.get("Value")) for r in rrs.get("ResourceRecords") or [] if isinstance(r, dict))
            ident = f"{name}[{rrs.get('SetIdentifier')}]" if rrs.get("SetIdentifier") else name
            diffs.append(ConfigChange(key=ident, from_=None, to=f"{c.value.get('Action', '')} {rrs.get('Type', '')} "
                                      f"{vals} weight={rrs.get('Weight', '')}".strip()))
    svc = names[0].split(".")[0] if names else service or "*"  # the record's own name first
    with expecting("ChangeInfo", _R53, info_node.start):
        cid = as_text(info.get("Id") or "").rsplit("/", 1)[-1] or f"{svc}@dns-{at.isoformat()}"
        return [Change(start=doc.start, end=doc.end, id=cid, type="dns", service=svc,
                       target=names[0] if names else None, targets=tuple(names), environment=environment,
                       started_at=at, completed_at=at, summary=as_text(info.get("Comment") or ""),
                       config_changes=tuple(diffs))], []


def parse_certificates(text: str, service: str, environment: str, tz: timezone | None = None
                       ) -> tuple[list[Change], list[Unparsed]]:
    """cert-manager objects: each CertificateRequest (else each Certificate's current revision) is a renewal."""
    doc = _json(text)
    kind = doc.get("kind")
    if doc.kind == "array":
        items, wheres = doc.items, [f"[{n}]" for n in range(len(doc.items))]
    elif "items" in doc.keys:
        items = listed(doc.get("items"), "items", _CERTS)
        wheres = [f"items[{n}]" for n in range(len(items))]
    elif kind is not None and kind.raw in ("Certificate", "CertificateRequest"):
        items, wheres = [doc], ["<document>"]
    else:
        raise ContentError("<document>", _CERTS, doc.start)
    certs: dict[str, tuple[str, ...]] = {}  # a Certificate's name: its DNS names
    for it, where in zip(items, wheres):
        if it.kind != "object":
            raise ContentError(where, _CERT, it.start)
        with expecting(where, _CERT, it.start):
            if it.value.get("kind") == "Certificate":
                certs[as_text((it.value.get("metadata") or {}).get("name"))] = _dns_names(it.value)
    out: list[Change] = []
    bad: list[Unparsed] = []

    def about(dns: tuple[str, ...] | None) -> str:
        return dns[0].split(".")[0] if dns else service or "*"  # the certificate's own name first

    requests = [(it, where) for it, where in zip(items, wheres) if it.value.get("kind") == "CertificateRequest"]
    for it, where in requests:
        with expecting(where, _CERT, it.start):
            v = it.value
            meta = v.get("metadata") or {}
            name = as_text(meta.get("name"))
            base = re.sub(r"-\d+$", "", name)
            dns = certs[base] if base in certs else next((c for n, c in certs.items() if name.startswith(n)), None)
            at = time_field(meta.get("creationTimestamp"), tz)
            if at is None:
                bad.append(Unparsed(start=it.start, end=it.end, reason="a CertificateRequest with creationTimestamp"))
                continue
            issuer = as_text(((v.get("spec") or {}).get("issuerRef") or {}).get("name"))
            out.append(Change(start=it.start, end=it.end, id=name, type="certificate", service=about(dns),
                              target=dns[0] if dns else None, environment=_dns_env(list(dns or ()), environment),
                              started_at=at, completed_at=at, summary=f"certificate request {name} issued by {issuer}".strip(),
                              config_changes=(ConfigChange(key="issuer", from_=None, to=issuer),) if issuer else ()))
    if not requests:
        for it, where in zip(items, wheres):
            v = it.value
            if v.get("kind") != "Certificate":
                continue
            with expecting(where, _CERT, it.start):
                st = v.get("status") or {}
                at = time_field(st.get("notBefore"), tz)
                if at is None:  # not issued yet: no change
                    continue
                name = as_text((v.get("metadata") or {}).get("name"))
                out.append(Change(start=it.start, end=it.end, id=f"{name}-{st.get('revision', '')}".rstrip("-"),
                                  type="certificate", service=about(_dns_names(v)), environment=environment,
                                  started_at=at, completed_at=at, summary=f"certificate {name} renewed"))
    return out, bad


def _dns_names(cert: dict) -> tuple[str, ...]:
    names = (cert.get("spec") or {}).get("dnsNames") or []
    if not isinstance(names, list):
        raise TypeError("dnsNames is a list")
    return tuple(as_text(n) for n in names)


def _dns_env(names: list, environment: str) -> str:
    """The environment a host name states (`web.prod.example`), when the file's is `*`."""
    if environment not in ("", "*"):
        return environment
    labels = [lab for n in names for lab in as_text(n).lower().split(".")]
    return next((lab for lab in labels for f in ENV_FAMILIES if lab in f), environment)
