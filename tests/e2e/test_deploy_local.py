"""`make deploy-local`: the app's own CDK template deployed into host LocalStack, the runtime bound to it.

One `agent-memory up --emulator localstack-stack` for the module (LocalStack start, `cdk synth`,
`cdk bootstrap`, `cdk deploy`, the runtime): the deployed resources are checked against the
synthesized template, the settings LocalStack drops are read back, the API key and the queue carry
a memory end to end, and `cdk destroy` (last) must leave only what the template retains. Skipped
with the reason when LocalStack (Python 3.13) or the CDK CLI is not installed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest

from agent_memory.aws_resources import DLQ_RETENTION_S, lifecycle_rules
from agent_memory.config import Settings
from agent_memory.local.cdk_local import ROOT, destroy
from tests.e2e.conftest import RunningMirror, pid_alive, start_mirror
from tests.e2e.test_mirror import wait_until


def _missing() -> str | None:
    from agent_memory.local.localstack import localstack_python

    try:
        localstack_python()
    except RuntimeError:
        return "LocalStack venv missing (needs Python 3.13): `make localstack`"
    if not (ROOT / "node_modules" / ".bin" / "cdk").exists():
        return "the CDK CLI is missing: `make install` (npm ci)"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))
TIMINGS: dict[str, float] = {}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningMirror]:
    data = tmp_path_factory.mktemp("deploy-local") / ".local"  # the README's curl reads .local/api_key
    data.mkdir()
    t0 = time.perf_counter()
    m = start_mirror(data, 0, 0, "--emulator", "localstack-stack", timeout_s=900)
    TIMINGS["up_total"] = time.perf_counter() - t0
    TIMINGS.update(m.info["stack_timings_s"])
    yield m
    pids = m.child_pids()
    m.stop()
    for pid in pids:
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"process {pid} outlived the mirror")
    print("deploy-local timings (s):", json.dumps({k: round(v, 1) for k, v in TIMINGS.items()}))


def aws(m: RunningMirror, service: str) -> Any:
    return boto3.client(service, endpoint_url=m.info["emulator"], region_name="us-east-1")


def template(m: RunningMirror) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((Path(m.info["stack_out"]) / "AgentMemory.template.json").read_text())
    return doc


def of_type(m: RunningMirror, kind: str) -> dict[str, dict[str, Any]]:
    return {k: r for k, r in template(m)["Resources"].items() if r["Type"] == kind}


def physical(m: RunningMirror) -> dict[str, tuple[str, str]]:
    """logical id -> (type, physical id) as CloudFormation reports the deployed stack."""
    cfn = aws(m, "cloudformation")
    out = {}
    for r in cfn.list_stack_resources(StackName="AgentMemory")["StackResourceSummaries"]:
        assert r["ResourceStatus"] == "CREATE_COMPLETE", r
        out[r["LogicalResourceId"]] = (r["ResourceType"], r["PhysicalResourceId"])
    return out


def test_every_resource_of_the_template_is_deployed(stack: RunningMirror) -> None:
    found = physical(stack)
    declared = {k: r["Type"] for k, r in template(stack)["Resources"].items() if r["Type"] != "AWS::CDK::Metadata"}
    assert {k: t for k, (t, _) in found.items()} == declared
    # and each service lists them itself, not only CloudFormation's bookkeeping
    count = Counter(declared.values())
    functions = aws(stack, "lambda").list_functions()["Functions"]
    assert len(functions) == count["AWS::Lambda::Function"] == 4
    assert all(aws(stack, "lambda").get_function(FunctionName=f["FunctionName"])["Configuration"]["State"] == "Active"
               for f in functions)
    envs = [f["Environment"]["Variables"] for f in functions]
    assert {e["AGENT_MEMORY_BUCKET_NAME"] for e in envs} == {stack.info["bucket"]}
    rules = aws(stack, "events").list_rules(NamePrefix="AgentMemory-")["Rules"]
    assert sorted(r["ScheduleExpression"] for r in rules) == ["cron(17 3 * * ? *)", "cron(17 4 * * ? *)"]
    assert all(aws(stack, "events").list_targets_by_rule(Rule=r["Name"])["Targets"] == [] for r in rules)
    alarms = aws(stack, "cloudwatch").describe_alarms()["MetricAlarms"]
    assert len(alarms) == count["AWS::CloudWatch::Alarm"]
    [topic] = aws(stack, "sns").list_topics()["Topics"]
    assert all(a["AlarmActions"] == [topic["TopicArn"]] for a in alarms)
    assert aws(stack, "secretsmanager").describe_secret(SecretId=stack.info["stack_index_secret"])["Name"]
    assert aws(stack, "lambda").list_event_source_mappings()["EventSourceMappings"] == []  # the runtime polls


def test_bucket_settings_including_what_cloudformation_dropped(stack: RunningMirror) -> None:
    s3, bucket = aws(stack, "s3"), stack.info["bucket"]
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    sse = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"][0]
    assert sse["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
    assert all(s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"].values())
    policy = json.loads(s3.get_bucket_policy(Bucket=bucket)["Policy"])
    assert any(st["Effect"] == "Deny" and st["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
               for st in policy["Statement"])
    # dropped by LocalStack's CloudFormation, applied by the mirror from the template, read back here
    assert stack.info["stack_not_applied"] == []
    rules = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    assert sorted(rules, key=lambda r: r["ID"]) == sorted(lifecycle_rules(Settings()), key=lambda r: r["ID"])
    [logs_logical] = [k for k in of_type(stack, "AWS::S3::Bucket") if k.startswith("StorageAccessLogs")]
    access_logs = physical(stack)[logs_logical][1]
    target = s3.get_bucket_logging(Bucket=bucket)["LoggingEnabled"]
    assert (target["TargetBucket"], target["TargetPrefix"]) == (access_logs, "originals/")
    [expiry] = s3.get_bucket_lifecycle_configuration(Bucket=access_logs)["Rules"]
    assert expiry["Expiration"] == {"Days": 365}
    declared = {physical(stack)[k][1]: r["Properties"]["RetentionInDays"]
                for k, r in of_type(stack, "AWS::Logs::LogGroup").items()}
    groups = aws(stack, "logs").describe_log_groups()["logGroups"]
    assert {g["logGroupName"]: g.get("retentionInDays") for g in groups if g["logGroupName"] in declared} == declared
    assert aws(stack, "cloudwatch").get_dashboard(DashboardName="agent-memory")["DashboardBody"]


def test_queue_and_dead_letter_queue_as_declared(stack: RunningMirror) -> None:
    sqs, s = aws(stack, "sqs"), Settings()
    attrs = sqs.get_queue_attributes(QueueUrl=stack.info["write_queue"], AttributeNames=["All"])["Attributes"]
    dlq = sqs.get_queue_attributes(QueueUrl=stack.info["dead_letter_queue"], AttributeNames=["All"])["Attributes"]
    assert json.loads(attrs["RedrivePolicy"]) == {"deadLetterTargetArn": dlq["QueueArn"],
                                                  "maxReceiveCount": s.max_receive_count}
    assert int(attrs["VisibilityTimeout"]) == s.visibility_timeout_s  # the template's, not the mirror's 10 s
    assert attrs["SqsManagedSseEnabled"] == "true" and dlq["SqsManagedSseEnabled"] == "true"
    assert int(dlq["MessageRetentionPeriod"]) == DLQ_RETENTION_S


def test_deployed_api_methods_and_key(stack: RunningMirror) -> None:
    apigw = aws(stack, "apigateway")
    [api] = apigw.get_rest_apis()["items"]
    methods = {}
    for res in apigw.get_resources(restApiId=api["id"], embed=["methods"])["items"]:
        for verb, method in res.get("resourceMethods", {}).items():
            methods[(res["path"], verb)] = method.get("apiKeyRequired", False)
    declared = of_type(stack, "AWS::ApiGateway::Method")
    assert len(methods) == len(declared) == 4
    assert methods == {("/", "ANY"): True, ("/{proxy+}", "ANY"): True,
                       ("/console", "GET"): False, ("/console/{name}", "GET"): False}
    [plan] = apigw.get_usage_plans()["items"]
    assert [(st["apiId"], st["stage"]) for st in plan["apiStages"]] == [(api["id"], "v1")]
    [key] = apigw.get_usage_plan_keys(usagePlanId=plan["id"])["items"]
    assert key["value"] == (stack.data_dir / "api_key").read_text().strip()
    # LocalStack's own API Gateway enforces the deployed key: 403 without it
    url = stack.info["stack_api_gateway"]
    assert httpx.post(f"{url}/v1/recall", json={"user_id": "u", "query": "q"}, timeout=30).status_code == 403
    assert httpx.get(f"{url}/health", timeout=30).status_code == 403
    with_key = httpx.post(f"{url}/v1/recall", json={"user_id": "u", "query": "q"}, timeout=60,
                          headers={"x-api-key": key["value"]})
    # the key is accepted; the function is then refused by the executor (no container, ever)
    assert with_key.status_code != 403 and with_key.status_code >= 500
    log = (stack.data_dir / "localstack" / "localstack.log").read_text()
    assert "agent-memory: LocalStack does not run this function" in log
    assert "DockerNotAvailable" not in log and "Failed to pull Docker image" not in log


def readme_curl(port: int) -> tuple[str, str]:
    """The README's two curl commands (remember, recall) as written, with the key line before each
    and the mirror's port instead of 8000."""
    text = (ROOT / "README.md").read_text()
    block = text.split("**Over HTTP against `make up`**")[1].split("```bash\n")[1].split("```")[0]
    lines = [ln for ln in block.replace("\\\n", " ").splitlines() if ln and not ln.startswith("#")]
    key, remember, recall = (ln.replace("localhost:8000", f"127.0.0.1:{port}") for ln in lines)
    return f"{key}; {remember}", f"{key}; {recall}"


def test_readme_curl_through_the_deployed_key_and_queue(stack: RunningMirror) -> None:
    """POST 202 -> the deployed queue -> the ingest handler -> recall, by the README's own commands."""
    user = "u1"  # the README's
    assert httpx.post(f"{stack.url}/v1/recall", json={"user_id": user, "query": "q"}, timeout=30).status_code == 403
    remember, recall = readme_curl(stack.api_port)

    def sh(cmd: str) -> dict[str, Any]:
        out = subprocess.run(["bash", "-c", cmd], cwd=stack.data_dir.parent, capture_output=True, text=True,
                             timeout=60, check=True)
        doc: dict[str, Any] = json.loads(out.stdout)
        return doc

    t0 = time.perf_counter()
    queued = sh(remember)
    assert queued["status"] == "queued", queued
    [mid] = queued["memory_ids"]
    wait_until(lambda: [h["memory_id"] for h in sh(recall)["memories"]] == [mid], timeout_s=60, every_s=0.5)
    TIMINGS["remember_to_recalled"] = time.perf_counter() - t0
    head = aws(stack, "s3").head_object(Bucket=stack.info["bucket"], Key=f"memories/{user}/{mid}.json")
    assert head["ServerSideEncryption"] == "AES256"
    sqs = aws(stack, "sqs")
    left = sqs.get_queue_attributes(QueueUrl=stack.info["write_queue"], AttributeNames=["All"])["Attributes"]
    assert left["ApproximateNumberOfMessages"] == "0" and left["ApproximateNumberOfMessagesNotVisible"] == "0"


def test_z_cdk_destroy_leaves_only_what_the_template_retains(stack: RunningMirror) -> None:
    """Runs last (file order). `DeletionPolicy: Retain` keeps the two buckets (memories outlive a
    stack) and, CDK's default for API Gateway's account-wide CloudWatch role, that role and the
    account setting; everything else must be gone."""
    before = physical(stack)
    retained = {k: before[k] for k, r in template(stack)["Resources"].items() if r.get("DeletionPolicy") == "Retain"}
    assert Counter(t for t, _ in retained.values()) == Counter(
        {"AWS::S3::Bucket": 2, "AWS::IAM::Role": 1, "AWS::ApiGateway::Account": 1})
    kept = {p for _, p in retained.values()}
    TIMINGS["destroy"] = destroy(stack.info["emulator"], "us-east-1", Path(stack.info["stack_out"]))
    cfn = aws(stack, "cloudformation")
    gone = [s for s in cfn.list_stacks()["StackSummaries"] if s["StackName"] == "AgentMemory"]
    assert gone and all(s["StackStatus"] == "DELETE_COMPLETE" for s in gone)
    assert aws(stack, "lambda").list_functions()["Functions"] == []
    assert aws(stack, "sqs").list_queues(QueueNamePrefix="AgentMemory").get("QueueUrls", []) == []
    assert aws(stack, "apigateway").get_rest_apis()["items"] == []
    assert aws(stack, "apigateway").get_api_keys()["items"] == []
    assert aws(stack, "events").list_rules(NamePrefix="AgentMemory-")["Rules"] == []
    assert aws(stack, "cloudwatch").describe_alarms()["MetricAlarms"] == []
    assert aws(stack, "sns").list_topics()["Topics"] == []
    assert [g["logGroupName"] for g in aws(stack, "logs").describe_log_groups()["logGroups"]
            if g["logGroupName"].startswith("AgentMemory")] == []
    assert [s for s in aws(stack, "secretsmanager").list_secrets()["SecretList"]
            if s["Name"].startswith("AgentMemory") and "DeletedDate" not in s] == []
    roles = {r["RoleName"] for r in aws(stack, "iam").list_roles()["Roles"] if r["RoleName"].startswith("AgentMemory")}
    assert roles == kept & roles and len(roles) == 1  # the API Gateway CloudWatch role alone
    buckets = {b["Name"] for b in aws(stack, "s3").list_buckets()["Buckets"]}
    assert {b for b in buckets if b.startswith("agentmemory-")} == {p for t, p in retained.values()
                                                                   if t == "AWS::S3::Bucket"}
