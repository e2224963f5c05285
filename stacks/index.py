"""Where the vector index runs: a container on ECS Fargate in a private VPC, or an external endpoint.

The container mode runs Milvus standalone with embedded etcd and local storage on EFS (one task,
state survives task replacement), reachable only from the Lambdas' security group through Cloud
Map (``milvus.agent-memory.internal:19530``). A secret holds the index credentials either way
(fill it after deploy for Zilliz/secured clusters; the container mode's default has no auth and
relies on the network boundary).
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_efs as efs
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secrets
from aws_cdk import aws_servicediscovery as sd
from constructs import Construct

from stacks.functions import NetworkPlacement
from stacks.options import DeployOptions

NAMESPACE = "agent-memory.internal"


class IndexEndpoint(Construct):
    """Exposes ``uri``, ``secret`` and, in container mode, ``network`` for the functions."""

    def __init__(self, scope: Construct, construct_id: str, *, options: DeployOptions) -> None:
        super().__init__(scope, construct_id)
        self.secret = secrets.Secret(self, "Credentials", description="agent-memory vector index token",
                                     generate_secret_string=secrets.SecretStringGenerator(
                                         exclude_punctuation=True, password_length=32))
        self.network: NetworkPlacement | None = None
        if options.index == "external":
            assert options.index_uri
            self.uri = options.index_uri
            return
        flow_logs = logs.LogGroup(self, "FlowLogs", retention=logs.RetentionDays.ONE_MONTH,
                                  removal_policy=RemovalPolicy.DESTROY)
        vpc = ec2.Vpc(self, "Vpc", max_azs=2, nat_gateways=1, flow_logs={
            "all": ec2.FlowLogOptions(destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_logs))})
        vpc.add_gateway_endpoint("S3", service=ec2.GatewayVpcEndpointAwsService.S3)
        functions_sg = ec2.SecurityGroup(self, "FunctionsSg", vpc=vpc, description="agent-memory Lambdas")
        index_sg = ec2.SecurityGroup(self, "IndexSg", vpc=vpc, description="agent-memory index",
                                     allow_all_outbound=True)
        port = 19530 if options.index == "milvus" else 6969
        index_sg.add_ingress_rule(functions_sg, ec2.Port.tcp(port), "index clients")
        fs = efs.FileSystem(self, "Data", vpc=vpc, encrypted=True, removal_policy=RemovalPolicy.RETAIN,
                            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
                            security_group=ec2.SecurityGroup(self, "DataSg", vpc=vpc, description="index EFS"))
        fs.connections.allow_default_port_from(index_sg)
        cluster = ecs.Cluster(self, "Cluster", vpc=vpc, container_insights_v2=ecs.ContainerInsights.ENABLED)
        task = ecs.FargateTaskDefinition(self, "Task", cpu=2048, memory_limit_mib=8192)
        task.add_volume(name="data", efs_volume_configuration=ecs.EfsVolumeConfiguration(
            file_system_id=fs.file_system_id, transit_encryption="ENABLED"))
        fs.grant_read_write(task.task_role)
        log_group = logs.LogGroup(self, "Logs", retention=logs.RetentionDays.ONE_MONTH,
                                  removal_policy=RemovalPolicy.DESTROY)
        if options.index == "milvus":
            container = task.add_container(
                "Milvus", image=ecs.ContainerImage.from_registry(options.milvus_image),
                command=["milvus", "run", "standalone"],
                environment={"ETCD_USE_EMBED": "true", "ETCD_DATA_DIR": "/var/lib/milvus/etcd",
                             "COMMON_STORAGETYPE": "local", "DEPLOY_MODE": "STANDALONE"},
                logging=ecs.LogDrivers.aws_logs(stream_prefix="milvus", log_group=log_group),
                port_mappings=[ecs.PortMapping(container_port=port)])
            mount = "/var/lib/milvus"
        else:
            container = task.add_container(
                "Helix", image=ecs.ContainerImage.from_registry(options.helix_image),
                logging=ecs.LogDrivers.aws_logs(stream_prefix="helix", log_group=log_group),
                port_mappings=[ecs.PortMapping(container_port=port)])
            mount = "/data"
        container.add_mount_points(ecs.MountPoint(container_path=mount, source_volume="data", read_only=False))
        namespace = sd.PrivateDnsNamespace(self, "Namespace", name=NAMESPACE, vpc=vpc)
        service = ecs.FargateService(
            self, "Service", cluster=cluster, task_definition=task, desired_count=1,
            min_healthy_percent=0, max_healthy_percent=100,  # one writer on the EFS data at a time
            circuit_breaker=ecs.DeploymentCircuitBreaker(rollback=True),
            security_groups=[index_sg], assign_public_ip=False,
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
            cloud_map_options=ecs.CloudMapOptions(name=options.index, cloud_map_namespace=namespace),
        )
        self.service = service
        scheme = "http" if options.index == "milvus" else "helix+http"
        self.uri = f"{scheme}://{options.index}.{NAMESPACE}:{port}"
        self.network = NetworkPlacement(vpc=vpc, security_group=functions_sg)
