"""The whole service as one stack: it only composes the constructs and wires grants."""

from __future__ import annotations

from aws_cdk import Acknowledgment, CfnOutput, Stack, Validations
from constructs import Construct

from agent_memory.config import Settings
from stacks.api import MemoryApi
from stacks.bundling import prepare_lambda_asset
from stacks.functions import MemoryFunctions
from stacks.index import IndexEndpoint
from stacks.monitoring import Monitoring
from stacks.options import DeployOptions
from stacks.queue import WriteQueue
from stacks.schedule import SelfCheckSchedule, TieringSchedule
from stacks.storage import OriginalsStorage
from stacks.working import WorkingMemoryTable


class AgentMemoryStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings, options: DeployOptions,
                 **kwargs: object) -> None:
        super().__init__(scope, construct_id, **kwargs)  # type: ignore[arg-type]
        storage = OriginalsStorage(self, "Storage", settings=settings)
        queue = WriteQueue(self, "Queue", settings=settings)
        index = IndexEndpoint(self, "Index", options=options)
        # local=true (LocalStack): no DynamoDB there; the runtime keeps working memory itself
        working = None if options.local else WorkingMemoryTable(self, "Working", settings=settings)
        functions = MemoryFunctions(
            self, "Functions", settings=settings, asset_dir=str(prepare_lambda_asset(options.bundle)),
            network=index.network,
            environment={
                "AGENT_MEMORY_BUCKET_NAME": storage.bucket.bucket_name,
                "AGENT_MEMORY_WRITE_QUEUE_URL": queue.queue.queue_url,
                "AGENT_MEMORY_INDEX_URI": index.uri,
                "AGENT_MEMORY_INDEX_TOKEN_SECRET_ARN": index.secret.secret_arn,
                "AGENT_MEMORY_AWS_REGION": self.region,
                **(working.environment if working else {}),
            },
        )
        for fn in functions.all:
            storage.grant_memory_access(fn, settings)
            index.secret.grant_read(fn)
        queue.queue.grant_send_messages(functions.api)
        if working:
            working.grant(functions.api)
        invoke = not options.local  # locally the runtime delivers: LocalStack must not invoke anything
        if invoke:
            queue.feed(functions.ingest)
        api = MemoryApi(self, "Api", handler=functions.api, options=options)
        schedule = SelfCheckSchedule(self, "SelfCheck", fn=functions.selfcheck, target=invoke)
        self.tiering = TieringSchedule(self, "Tiering", fn=functions.tier, target=invoke)
        monitoring = Monitoring(self, "Monitoring", functions=functions.all, api=api.api, queue=queue.queue,
                                dlq=queue.dlq, extra_alarms=[queue.dlq_alarm, schedule.alarm],
                                alarm_email=options.alarm_email)
        self.storage, self.queue, self.index, self.functions = storage, queue, index, functions
        self.working = working
        self.api, self.schedule, self.monitoring = api, schedule, monitoring
        CfnOutput(self, "ApiUrl", value=api.api.url)
        CfnOutput(self, "BucketName", value=storage.bucket.bucket_name)
        CfnOutput(self, "IndexUri", value=index.uri)
        # what the local runtime binds to (make deploy-local); plain names, no secrets
        CfnOutput(self, "WriteQueueUrl", value=queue.queue.queue_url)
        CfnOutput(self, "DeadLetterQueueUrl", value=queue.dlq.queue_url)
        CfnOutput(self, "IndexSecretArn", value=index.secret.secret_arn)
        if api.api_key is not None:
            CfnOutput(self, "ApiKeyId", value=api.api_key.key_id)
        _acknowledge(self, options, settings)


class _Acks:
    def __init__(self, stack: Stack) -> None:
        self.validations = Validations.of(stack)

    def acknowledge(self, id: str, reason: str) -> None:
        self.validations.acknowledge(Acknowledgment(id=id, reason=reason))


def _acknowledge(stack: AgentMemoryStack, options: DeployOptions, settings: Settings) -> None:
    """cdk-nag findings we accept, each with its reason. Finding ids are exact (cdk-nag v3 has no
    prefix matching), so each names the policy or resource pattern it accepts."""
    v = _Acks(stack)
    managed = ["AWSLambdaBasicExecutionRole", "AmazonAPIGatewayPushToCloudWatchLogs"]
    if options.index != "external":
        managed.append("AWSLambdaVPCAccessExecutionRole")
    for policy in managed:
        v.acknowledge(id=f"AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/{policy}]",
                      reason="AWS's standard execution role policy: logs (and ENIs in a VPC); nothing on our data.")
    bucket_arn = f"<{stack.get_logical_id(stack.storage.bucket.node.default_child)}.Arn>"  # type: ignore[arg-type]
    for pattern in stack.storage.object_patterns(settings):
        v.acknowledge(id=f"AwsSolutions-IAM5[Resource::{bucket_arn}/{pattern}]", reason=(
            "Memories are objects named by user and id under this prefix; the functions need any of them, "
            "and only these object actions (stacks/storage.py grant_memory_access)."))
    v.acknowledge(id="AwsSolutions-IAM5[Resource::*]", reason=(
        "X-Ray's PutTraceSegments/PutTelemetryRecords (active tracing) and ENI management accept no "
        "resource narrower than *."))
    v.acknowledge(id="AwsSolutions-APIG3", reason=(
        "WAF is an account-level choice with its own cost; throttling and a usage plan limit abuse. "
        "Attach a WebACL to the stage if the API is internet-facing in your organisation."))
    v.acknowledge(id="AwsSolutions-L1", reason=(
        "Python 3.12 is pinned on purpose: the bundled wheels are built for it (stacks/bundling.py)."))
    v.acknowledge(id="AwsSolutions-COG4", reason=(
        "Callers are agent backends, not end users: they authenticate with AWS_IAM (SigV4) or an API key "
        "with a usage plan (context auth); a Cognito user pool would add nothing they can use."))
    if options.auth == "api_key":
        v.acknowledge(id="AwsSolutions-APIG4", reason=(
            "Chosen by context auth=api_key: every method requires an API key bound to a usage plan; "
            "deploy with -c auth=iam for SigV4 (AWS_IAM) authorization on every method. The only "
            "exception is GET /console and GET /console/{name}: the console's static files, no data."))
    else:
        v.acknowledge(id="AwsSolutions-APIG4", reason=(
            "Every method is AWS_IAM except GET /console and GET /console/{name}, which serve the "
            "console's static files (no data; every call the page makes needs authorization)."))
    if options.index != "external":
        v.acknowledge(id="AwsSolutions-ECS2", reason=(
            "The index container's environment holds only non-secret Milvus settings; credentials "
            "live in Secrets Manager."))
        v.acknowledge(id="AwsSolutions-SMG4", reason=(
            "The index token is set by the operator for their index; Milvus has no rotation hook."))
    else:
        v.acknowledge(id="AwsSolutions-SMG4", reason=(
            "The secret holds the external index's token (Zilliz/Milvus); rotate it at the provider."))
