"""The three Lambda functions, sharing one code asset and one environment."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from agent_memory.config import Settings
from stacks.bundling import MODEL_CACHE


@dataclass(frozen=True)
class NetworkPlacement:
    vpc: ec2.IVpc
    security_group: ec2.ISecurityGroup


class MemoryFunctions(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings, asset_dir: str,
                 environment: dict[str, str], network: NetworkPlacement | None) -> None:
        super().__init__(scope, construct_id)
        code = lambda_.Code.from_asset(asset_dir)
        env = {
            "POWERTOOLS_METRICS_NAMESPACE": "AgentMemory",
            "AGENT_MEMORY_STORE": "s3",
            "AGENT_MEMORY_DATA_DIR": "/tmp/agent-memory",
            "AGENT_MEMORY_EMBEDDING_PROVIDER": settings.embedding_provider,
            "AGENT_MEMORY_MODEL_CACHE_DIR": f"/var/task/{MODEL_CACHE}",
            **environment,
        }
        ingest_timeout = max(10, settings.visibility_timeout_s // 6)  # AWS: visibility >= 6 x timeout

        def make(name: str, handler: str, timeout_s: int, memory_mb: int, description: str) -> lambda_.Function:
            log_group = logs.LogGroup(self, f"{name}Logs", retention=logs.RetentionDays.THREE_MONTHS,
                                      removal_policy=RemovalPolicy.DESTROY)
            return lambda_.Function(
                self, name, runtime=lambda_.Runtime.PYTHON_3_12, architecture=lambda_.Architecture.X86_64,
                code=code, handler=handler, timeout=Duration.seconds(timeout_s), memory_size=memory_mb,
                environment={**env, "POWERTOOLS_SERVICE_NAME": f"agent-memory-{name.lower()}"},
                tracing=lambda_.Tracing.ACTIVE, log_group=log_group, description=description,
                vpc=network.vpc if network else None,
                vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS) if network else None,
                security_groups=[network.security_group] if network else None,
            )

        self.api = make("Api", "lambdas.api.handler", 29, 1536, "agent-memory REST API")
        self.ingest = make("Ingest", "lambdas.ingest.handler", ingest_timeout, 1536,
                           "agent-memory write pipeline (SQS)")
        self.selfcheck = make("SelfCheck", "lambdas.selfcheck.handler", 60, 1536, "agent-memory daily canary")
        self.tier = make("Tier", "lambdas.tier.handler", 900, 1536, "agent-memory daily index tiering")
        self.all = [self.api, self.ingest, self.selfcheck, self.tier]
