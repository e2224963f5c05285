"""`-c local=true` (what `make deploy-local` deploys into LocalStack) differs from the AWS template
by exactly the list in `stacks/options.py` (`LOCAL_DIFFERENCES`, repeated in the README), and the
settings LocalStack drops are converted back to the APIs' shapes without loss."""

from __future__ import annotations

from collections import Counter
from typing import Any

from agent_memory.aws_resources import lifecycle_rules
from agent_memory.config import Settings
from agent_memory.local.stack_gaps import StackView, UnresolvableError, resolve, s3_lifecycle_rules
from stacks.options import LOCAL_DIFFERENCES, LOCAL_INDEX_URI
from tests.infrastructure.conftest import synth

EXTERNAL = {"index": "external", "index_uri": "https://in01.example.zillizcloud.com:19530"}
"""The AWS variant without a VPC: the local one's index is `external` too (first item of the list)."""


def _resources(template: Any) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = template.to_json()["Resources"]
    return found


def test_local_variant_leaves_out_only_the_listed_resources() -> None:
    _, aws = synth(**EXTERNAL)
    _, local = synth(local="true")
    aws_types = Counter(r["Type"] for r in _resources(aws).values())
    local_types = Counter(r["Type"] for r in _resources(local).values())
    assert aws_types - local_types == Counter({
        "AWS::DynamoDB::GlobalTable": 1,  # the working-memory table
        "AWS::Lambda::EventSourceMapping": 1,  # the queue trigger
        "AWS::Lambda::Permission": 2,  # EventBridge may invoke SelfCheck and Tier: the rules' targets
    })
    assert local_types - aws_types == Counter()
    assert set(LOCAL_DIFFERENCES) == {"index", "working-memory table", "queue trigger and rule targets",
                                      "Lambda code"}


def test_local_variant_keeps_the_rules_without_targets_and_functions_without_the_table() -> None:
    _, local = synth(local="true")
    res = _resources(local)
    rules = [r["Properties"] for r in res.values() if r["Type"] == "AWS::Events::Rule"]
    assert len(rules) == 2 and all("Targets" not in r for r in rules)
    assert all(r["Properties"]["ScheduleExpression"].startswith("cron(17 ") for r in res.values()
               if r["Type"] == "AWS::Events::Rule")
    functions = [r["Properties"] for r in res.values() if r["Type"] == "AWS::Lambda::Function"]
    assert len(functions) == 4
    for fn in functions:
        env = fn["Environment"]["Variables"]
        assert "AGENT_MEMORY_WORKING_TABLE_NAME" not in env
        assert env["AGENT_MEMORY_INDEX_URI"] == LOCAL_INDEX_URI
        assert "VpcConfig" not in fn
    outputs = local.to_json()["Outputs"]
    assert {"BucketName", "WriteQueueUrl", "DeadLetterQueueUrl", "IndexSecretArn", "ApiKeyId"} <= set(outputs)


def test_local_wins_over_cdk_json_index_and_bundle() -> None:
    """cdk.json sets index=milvus and bundle=full for AWS; `-c local=true` must still give neither a
    VPC nor the full bundle (LocalStack has no ECS/EFS, and nobody runs that code locally)."""
    _, local = synth(local="true", index="milvus", bundle="full")
    types = {r["Type"] for r in _resources(local).values()}
    assert not {t for t in types if t.startswith(("AWS::EC2::", "AWS::ECS::", "AWS::EFS::"))}


def test_template_lifecycle_converts_back_to_the_mirrors_rules(template: Any) -> None:
    """What `make deploy-local` applies from the template equals `aws_resources.lifecycle_rules`
    (the definition the CDK bucket was made from), rule by rule."""
    [originals] = [r for k, r in _resources(template).items()
                   if r["Type"] == "AWS::S3::Bucket" and k.startswith("StorageOriginals")]
    converted = s3_lifecycle_rules(originals["Properties"]["LifecycleConfiguration"])
    assert converted == lifecycle_rules(Settings())


def test_resolver_evaluates_refs_joins_and_queue_names_and_refuses_the_rest() -> None:
    view = StackView({"Bucket": "b-1", "Q": "http://h:1/000000000000/q-name"}, "eu-west-1")
    doc = {"a": {"Fn::Join": ["-", [{"Ref": "Bucket"}, {"Ref": "AWS::Region"}]]},
           "b": [{"Fn::GetAtt": ["Q", "QueueName"]}], "c": 3}
    assert resolve(doc, view) == {"a": "b-1-eu-west-1", "b": ["q-name"], "c": 3}
    for bad in ({"Ref": "Missing"}, {"Fn::Sub": "x"}, {"Fn::GetAtt": ["Bucket", "Arn"]}):
        try:
            resolve(bad, view)
        except UnresolvableError:
            continue
        raise AssertionError(f"{bad} resolved")


def test_a_rule_without_id_gets_one_and_unresolvable_settings_are_reported_not_guessed() -> None:
    """The access-log bucket's rule has no Id (LocalStack refuses such a rule; AWS makes one up), and
    a property with an intrinsic function not evaluated here is listed as not applied, before any
    call is made (the clients are never touched, so None stands in for them)."""
    from agent_memory.local.stack_gaps import apply_dropped

    assert s3_lifecycle_rules({"Rules": [{"ExpirationInDays": 365, "Status": "Enabled"}]}) == [
        {"ID": "rule-0", "Status": "Enabled", "Filter": {"Prefix": ""}, "Expiration": {"Days": 365}}]
    template = {"Resources": {"Dash": {"Type": "AWS::CloudWatch::Dashboard",
                                       "Properties": {"DashboardBody": {"Fn::Sub": "${AWS::Region}"}}}}}
    report = apply_dropped(template, StackView({"Dash": "d"}, "us-east-1"), None, None, None)
    assert report.applied == [] and report.failed == ["AWS::CloudWatch::Dashboard Dash: Fn::Sub is not evaluated here"]
