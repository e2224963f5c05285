"""The working-memory table: per-session task state with DynamoDB's TTL doing the forgetting.

On-demand billing (traffic follows the agents'), AWS-managed encryption, point-in-time
recovery; key and TTL attribute names come from :mod:`agent_memory.aws_resources`, as in
the local mirror. Only the API function reads and writes it.
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from constructs import Construct

from agent_memory.aws_resources import WORKING_PARTITION_KEY, WORKING_SORT_KEY, WORKING_TTL_ATTRIBUTE
from agent_memory.config import Settings


class WorkingMemoryTable(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings) -> None:
        super().__init__(scope, construct_id)
        self.table = dynamodb.TableV2(
            self, "Table",
            partition_key=dynamodb.Attribute(name=WORKING_PARTITION_KEY, type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name=WORKING_SORT_KEY, type=dynamodb.AttributeType.STRING),
            billing=dynamodb.Billing.on_demand(),
            encryption=dynamodb.TableEncryptionV2.aws_managed_key(),
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True),
            time_to_live_attribute=WORKING_TTL_ATTRIBUTE,
            removal_policy=RemovalPolicy.DESTROY,  # task state with a TTL: nothing to keep
        )
        self.environment = {"AGENT_MEMORY_WORKING_STORE": "dynamodb",
                            "AGENT_MEMORY_WORKING_TABLE_NAME": self.table.table_name,
                            "AGENT_MEMORY_WORKING_TTL_S": str(int(settings.working_ttl_s))}

    def grant(self, grantee: iam.IGrantable) -> None:
        self.table.grant_read_write_data(grantee)
