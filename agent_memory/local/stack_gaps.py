"""What LocalStack's CloudFormation accepts but silently drops, applied through the service APIs.

LocalStack 2026.3 creates the buckets, log groups and dashboard of the app's template, but not the
buckets' lifecycle rules and access logging, the log groups' retention, nor the dashboard itself.
``make deploy-local`` reads those properties from the same synthesized template it deployed and
applies them with the S3, CloudWatch Logs and CloudWatch APIs, so what the local stack holds is
what the template declares. Only the intrinsic functions these properties use are resolved
(``Ref``, ``Fn::Join``, ``Fn::GetAtt`` of a queue's name); anything else is reported, not guessed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

PSEUDO = {"AWS::Partition": "aws", "AWS::URLSuffix": "amazonaws.com"}


class UnresolvableError(ValueError):
    """A template value uses an intrinsic function this module does not evaluate."""


@dataclass(frozen=True)
class StackView:
    """The deployed stack as the resolver needs it: logical id -> physical id, and the region."""

    physical: dict[str, str]
    region: str
    account: str = "000000000000"

    def ref(self, name: str) -> str:
        if name == "AWS::Region":
            return self.region
        if name == "AWS::AccountId":
            return self.account
        if name in PSEUDO:
            return PSEUDO[name]
        try:
            return self.physical[name]
        except KeyError:
            raise UnresolvableError(f"Ref {name}: no such resource in the deployed stack") from None

    def get_att(self, name: str, attribute: str) -> str:
        physical = self.ref(name)
        if attribute == "QueueName" and physical.startswith("http"):
            return physical.rstrip("/").rsplit("/", 1)[-1]  # a queue's physical id is its URL
        raise UnresolvableError(f"Fn::GetAtt {name}.{attribute} is not evaluated here")


def resolve(value: Any, stack: StackView) -> Any:
    """``value`` with ``Ref``/``Fn::Join``/``Fn::GetAtt`` replaced by the deployed values."""
    if isinstance(value, list):
        return [resolve(v, stack) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        [(key, arg)] = value.items()
        if key == "Ref":
            return stack.ref(arg)
        if key == "Fn::Join":
            sep, parts = arg
            return str(sep).join(str(resolve(p, stack)) for p in parts)
        if key == "Fn::GetAtt":
            name, attribute = arg if isinstance(arg, list) else arg.split(".", 1)
            return stack.get_att(name, attribute)
        if key.startswith("Fn::"):
            raise UnresolvableError(f"{key} is not evaluated here")
    return {k: resolve(v, stack) for k, v in value.items()}


def s3_lifecycle_rules(cfn: dict[str, Any]) -> list[dict[str, Any]]:
    """A CloudFormation ``LifecycleConfiguration`` as ``PutBucketLifecycleConfiguration`` rules. A rule
    without ``Id`` gets ``rule-<n>`` (AWS makes one up; LocalStack refuses a rule without one)."""
    rules = []
    for n, rule in enumerate(cfn.get("Rules", [])):
        out: dict[str, Any] = {"ID": rule.get("Id", f"rule-{n}"), "Status": rule["Status"],
                               "Filter": {"Prefix": rule.get("Prefix", "")}}
        if "Transitions" in rule:
            out["Transitions"] = [{"Days": t["TransitionInDays"], "StorageClass": t["StorageClass"]}
                                  for t in rule["Transitions"]]
        if "ExpirationInDays" in rule:
            out["Expiration"] = {"Days": rule["ExpirationInDays"]}
        if "NoncurrentVersionExpiration" in rule:
            out["NoncurrentVersionExpiration"] = {
                "NoncurrentDays": rule["NoncurrentVersionExpiration"]["NoncurrentDays"]}
        if "AbortIncompleteMultipartUpload" in rule:
            out["AbortIncompleteMultipartUpload"] = rule["AbortIncompleteMultipartUpload"]
        rules.append(out)
    return rules


@dataclass
class GapReport:
    """What was applied (``"<kind> <physical id>"``) and what could not be, with the reason."""

    applied: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def apply_dropped(template: dict[str, Any], stack: StackView, s3: Any, logs: Any, cloudwatch: Any) -> GapReport:
    """Apply every bucket lifecycle and logging configuration, log-group retention and dashboard
    the template declares, to the resources the deployment created."""
    report = GapReport()
    for logical, res in template.get("Resources", {}).items():
        props, kind = res.get("Properties", {}), res["Type"]
        try:
            if kind == "AWS::S3::Bucket":
                bucket = stack.ref(logical)
                if "LifecycleConfiguration" in props:
                    rules = s3_lifecycle_rules(resolve(props["LifecycleConfiguration"], stack))
                    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": rules})
                    report.applied.append(f"lifecycle {bucket}")
                if "LoggingConfiguration" in props:
                    cfg = resolve(props["LoggingConfiguration"], stack)
                    s3.put_bucket_logging(Bucket=bucket, BucketLoggingStatus={"LoggingEnabled": {
                        "TargetBucket": cfg["DestinationBucketName"], "TargetPrefix": cfg.get("LogFilePrefix", "")}})
                    report.applied.append(f"access logging {bucket}")
            elif kind == "AWS::Logs::LogGroup" and "RetentionInDays" in props:
                group = stack.ref(logical)
                logs.put_retention_policy(logGroupName=group, retentionInDays=int(props["RetentionInDays"]))
                report.applied.append(f"retention {group}")
            elif kind == "AWS::CloudWatch::Dashboard":
                body = resolve(props["DashboardBody"], stack)
                name = props.get("DashboardName") or stack.ref(logical)
                json.loads(body)  # a broken body should fail here, naming the dashboard
                cloudwatch.put_dashboard(DashboardName=name, DashboardBody=body)
                report.applied.append(f"dashboard {name}")
        except Exception as exc:  # reported, never hidden: the caller prints and tests assert it empty
            report.failed.append(f"{kind} {logical}: {exc}")
    return report
