"""Assertions on the synthesized CloudFormation template."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Match

from agent_memory.aws_resources import lifecycle_rules
from agent_memory.config import Settings
from tests.infrastructure.conftest import synth


def resources(template: Any, kind: str) -> dict[str, Any]:
    return dict(template.find_resources(kind))


def originals_bucket(template: Any) -> dict[str, Any]:
    [bucket] = [b for b in resources(template, "AWS::S3::Bucket").values()
                if "LifecycleConfiguration" in b["Properties"] and "VersioningConfiguration" in b["Properties"]]
    return dict(bucket["Properties"])


def test_bucket_is_versioned_private_encrypted_and_retained(template: Any) -> None:
    props = originals_bucket(template)
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    assert props["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True, "BlockPublicPolicy": True, "IgnorePublicAcls": True, "RestrictPublicBuckets": True}
    assert props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"][
        "SSEAlgorithm"] == "AES256"
    retained = [b for b in resources(template, "AWS::S3::Bucket").values() if b.get("DeletionPolicy") == "Retain"]
    assert len(retained) == 2


def test_bucket_policy_denies_insecure_transport(template: Any) -> None:
    policies = json.dumps(resources(template, "AWS::S3::BucketPolicy"))
    assert '"aws:SecureTransport": "false"' in policies


def test_lifecycle_matches_the_shared_settings(template: Any) -> None:
    """The same rules the local mirror applies: one source, two consumers."""
    s = Settings()
    rules = {r["Id"]: r for r in originals_bucket(template)["LifecycleConfiguration"]["Rules"]}
    tier = rules["tier-originals"]
    assert tier["Prefix"] == s.key_prefix
    assert tier["Transitions"] == [
        {"StorageClass": "STANDARD_IA", "TransitionInDays": 30},
        {"StorageClass": s.archive_storage_class, "TransitionInDays": 180},
    ]
    assert tier["NoncurrentVersionExpiration"] == {"NoncurrentDays": s.noncurrent_version_expiry_days}
    expected = {r["ID"] for r in lifecycle_rules(s)}
    assert set(rules) == expected
    assert rules["expire-recall-log"]["ExpirationInDays"] == s.recall_log_retention_days


def test_queue_has_a_dlq_with_the_configured_retries_and_an_alarm(template: Any) -> None:
    s = Settings()
    template.has_resource_properties("AWS::SQS::Queue", {
        "RedrivePolicy": {"deadLetterTargetArn": Match.any_value(), "maxReceiveCount": s.max_receive_count},
        "VisibilityTimeout": s.visibility_timeout_s, "SqsManagedSseEnabled": True,
    })
    template.has_resource_properties("AWS::CloudWatch::Alarm", {
        "MetricName": "ApproximateNumberOfMessagesVisible", "Threshold": 1,
        "ComparisonOperator": "GreaterThanOrEqualToThreshold"})


def test_ingest_reports_batch_item_failures(template: Any) -> None:
    template.has_resource_properties("AWS::Lambda::EventSourceMapping", {
        "FunctionResponseTypes": ["ReportBatchItemFailures"], "BatchSize": Settings().ingest_batch_size,
        "ScalingConfig": {"MaximumConcurrency": Settings().ingest_max_concurrency}})


def test_four_functions_with_the_handlers(template: Any) -> None:
    functions = resources(template, "AWS::Lambda::Function")
    handlers = {f["Properties"].get("Handler") for f in functions.values()}
    assert {"lambdas.api.handler", "lambdas.ingest.handler", "lambdas.selfcheck.handler",
            "lambdas.tier.handler"} <= handlers
    ours = [f for f in functions.values() if str(f["Properties"].get("Handler", "")).startswith("lambdas.")]
    for fn in ours:
        props = fn["Properties"]
        assert props["Runtime"] == "python3.12" and props["TracingConfig"] == {"Mode": "Active"}
        env = props["Environment"]["Variables"]
        assert env["AGENT_MEMORY_STORE"] == "s3" and "AGENT_MEMORY_WRITE_QUEUE_URL" in env
        assert "VpcConfig" in props  # container index: functions run in the VPC


def test_daily_schedules_target_selfcheck_and_tiering(template: Any) -> None:
    rules = {r["Properties"]["ScheduleExpression"]: json.dumps(r["Properties"]["Targets"])
             for r in resources(template, "AWS::Events::Rule").values()}
    assert len(rules) == 2
    [canary] = [t for e, t in rules.items() if e.startswith("cron(17 3 ")]
    [tiering] = [t for e, t in rules.items() if e.startswith("cron(17 4 ")]
    assert "SelfCheck" in canary and "Tier" in tiering
    template.has_resource_properties("AWS::CloudWatch::Alarm", {
        "MetricName": "SelfCheckSuccess", "TreatMissingData": "breaching"})


def console_method(template: Any, method: dict[str, Any]) -> bool:
    """GET on the /console resources: the console's static files, the one thing served without a key."""
    ref = method["Properties"]["ResourceId"].get("Ref")  # the root resource is a GetAtt
    if ref is None or method["Properties"]["HttpMethod"] != "GET":
        return False
    return template.to_json()["Resources"][ref]["Properties"]["PathPart"] in ("console", "{name}")


def test_every_api_method_requires_an_api_key_by_default(template: Any) -> None:
    methods = resources(template, "AWS::ApiGateway::Method")
    assert methods
    data = [m for m in methods.values()
            if m["Properties"]["HttpMethod"] != "OPTIONS" and not console_method(template, m)]
    assert data and all(m["Properties"]["ApiKeyRequired"] is True for m in data)
    console = [m for m in methods.values() if console_method(template, m)]
    assert len(console) == 2 and all(m["Properties"].get("ApiKeyRequired") is not True for m in console)
    template.resource_count_is("AWS::ApiGateway::UsagePlan", 1)
    template.has_resource_properties("AWS::ApiGateway::Stage", {
        "AccessLogSetting": Match.object_like({"DestinationArn": Match.any_value()}),
        "MethodSettings": Match.array_with([Match.object_like({"ThrottlingRateLimit": 100})])})


def test_iam_auth_variant_signs_every_method() -> None:
    _, template = synth(auth="iam")
    methods = [m for m in resources(template, "AWS::ApiGateway::Method").values() if not console_method(template, m)]
    assert methods and all(m["Properties"]["AuthorizationType"] == "AWS_IAM" for m in methods)
    template.resource_count_is("AWS::ApiGateway::UsagePlan", 0)


def test_external_index_creates_no_vpc() -> None:
    _, template = synth(index="external", index_uri="https://in01.example.zillizcloud.com:19530")
    template.resource_count_is("AWS::EC2::VPC", 0)
    template.resource_count_is("AWS::ECS::Service", 0)
    template.resource_count_is("AWS::SecretsManager::Secret", 1)
    env = [f["Properties"]["Environment"]["Variables"] for f in resources(template, "AWS::Lambda::Function").values()
           if str(f["Properties"].get("Handler", "")).startswith("lambdas.")]
    assert all(e["AGENT_MEMORY_INDEX_URI"] == "https://in01.example.zillizcloud.com:19530" for e in env)


def test_container_index_runs_milvus_on_fargate_with_efs(template: Any) -> None:
    template.resource_count_is("AWS::ECS::Service", 1)
    template.has_resource_properties("AWS::ECS::TaskDefinition", {
        "ContainerDefinitions": Match.array_with([Match.object_like({
            "Image": Match.string_like_regexp("milvusdb/milvus"),
            "MountPoints": [{"ContainerPath": "/var/lib/milvus", "ReadOnly": False, "SourceVolume": "data"}]})]),
        "RequiresCompatibilities": ["FARGATE"]})
    template.has_resource_properties("AWS::EFS::FileSystem", {"Encrypted": True})
    template.has_resource_properties("AWS::EC2::SecurityGroupIngress", {"FromPort": 19530, "ToPort": 19530})


def test_helix_index_runs_the_helixdb_container_on_its_port() -> None:
    _, template = synth(index="helix")
    template.has_resource_properties("AWS::ECS::TaskDefinition", {
        "ContainerDefinitions": Match.array_with([Match.object_like({"Image": Match.string_like_regexp("helix")})])})
    template.has_resource_properties("AWS::EC2::SecurityGroupIngress", {"FromPort": 6969, "ToPort": 6969})
    env = [f["Properties"]["Environment"]["Variables"] for f in resources(template, "AWS::Lambda::Function").values()
           if str(f["Properties"].get("Handler", "")).startswith("lambdas.")]
    assert env and all(e["AGENT_MEMORY_INDEX_URI"].startswith("helix+http://helix.") for e in env)
    assert all("AGENT_MEMORY_INDEX_TOKEN_SECRET_ARN" in e for e in env)


def test_working_memory_table_has_ttl_and_only_the_api_may_use_it(template: Any) -> None:
    from agent_memory.aws_resources import WORKING_TTL_ATTRIBUTE

    template.has_resource_properties("AWS::DynamoDB::GlobalTable", {
        "BillingMode": "PAY_PER_REQUEST",
        "TimeToLiveSpecification": {"AttributeName": WORKING_TTL_ATTRIBUTE, "Enabled": True},
        "SSESpecification": {"SSEEnabled": True},
        "Replicas": [Match.object_like({"PointInTimeRecoverySpecification": {
            "PointInTimeRecoveryEnabled": True}})]})
    functions = resources(template, "AWS::Lambda::Function")
    api = next(f for f in functions.values() if f["Properties"].get("Handler") == "lambdas.api.handler")
    assert api["Properties"]["Environment"]["Variables"]["AGENT_MEMORY_WORKING_STORE"] == "dynamodb"
    policies = resources(template, "AWS::IAM::Policy")
    with_dynamo = [name for name, p in policies.items() if "dynamodb:" in json.dumps(p["Properties"])]
    assert len(with_dynamo) == 1 and "Api" in with_dynamo[0]


def test_functions_get_only_the_s3_actions_they_use(template: Any) -> None:
    docs = json.dumps(resources(template, "AWS::IAM::Policy"))
    assert "s3:*" not in docs and "s3:PutObject*" not in docs
    assert "s3:DeleteObjectVersion" in docs and "s3:ListBucketVersions" in docs
    for prefix in ("memories/*", "recalls/*", "cold/*", "documents/*", "decisions/*"):
        assert f"/{prefix}" in docs, prefix  # every prefix the erasure, expiry and tiering jobs write or delete


def test_alarms_cover_errors_throttles_dlq_and_canary(template: Any) -> None:
    alarms = resources(template, "AWS::CloudWatch::Alarm").values()
    names = [a["Properties"].get("MetricName") for a in alarms]
    assert names.count("Errors") == 4 and names.count("Throttles") == 4  # one each per function
    assert "SelfCheckSuccess" in names and "ApproximateNumberOfMessagesVisible" in names
    assert all(a["Properties"].get("AlarmActions") for a in alarms)
    template.resource_count_is("AWS::CloudWatch::Dashboard", 1)


@pytest.mark.parametrize("bad", [{"index": "redis"}, {"index": "external"}, {"auth": "none"}])
def test_bad_context_is_refused(bad: dict[str, str]) -> None:
    with pytest.raises(Exception, match="context"):
        synth(**bad)
