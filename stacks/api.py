"""API Gateway REST API in front of the API function: auth on every method, throttling, access logs."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from stacks.options import DeployOptions


class MemoryApi(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, handler: lambda_.IFunction,
                 options: DeployOptions) -> None:
        super().__init__(scope, construct_id)
        access_logs = logs.LogGroup(self, "AccessLogs", retention=logs.RetentionDays.ONE_YEAR,
                                    removal_policy=RemovalPolicy.DESTROY)
        iam = options.auth == "iam"
        self.api_key: apigw.IApiKey | None = None
        self.api = apigw.LambdaRestApi(
            self, "Rest", handler=handler, proxy=True, rest_api_name="agent-memory",
            cloud_watch_role=True,
            deploy_options=apigw.StageOptions(
                stage_name="v1", throttling_rate_limit=options.throttle_rate,
                throttling_burst_limit=options.throttle_burst, tracing_enabled=True,
                logging_level=apigw.MethodLoggingLevel.ERROR, metrics_enabled=True,
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=apigw.AccessLogFormat.json_with_standard_fields(
                    caller=True, http_method=True, ip=True, protocol=True, request_time=True,
                    resource_path=True, response_length=True, status=True, user=True),
            ),
            default_method_options=apigw.MethodOptions(
                authorization_type=apigw.AuthorizationType.IAM if iam else apigw.AuthorizationType.NONE,
                api_key_required=not iam,
            ),
        )
        # Bodies are validated by the function (Pydantic) with precise messages; API Gateway checks
        # declared parameters, and a body only against a model, which proxy routes do not declare.
        self.api.add_request_validator("Validator", validate_request_body=True, validate_request_parameters=True)
        # The memory console's static files (GET only) are the one thing served without a key: they
        # hold no data, and a browser cannot add x-api-key to a page load. Every call the page makes
        # goes to the keyed routes above. (With auth=iam a browser cannot sign them: use API keys.)
        console = self.api.root.add_resource("console")
        for resource in (console, console.add_resource("{name}")):
            resource.add_method("GET", authorization_type=apigw.AuthorizationType.NONE, api_key_required=False)
        if not iam:
            key = self.api.add_api_key("DefaultKey", api_key_name="agent-memory-default")
            plan = self.api.add_usage_plan("Plan", name="agent-memory", throttle=apigw.ThrottleSettings(
                rate_limit=options.throttle_rate, burst_limit=options.throttle_burst))
            plan.add_api_key(key)
            plan.add_api_stage(stage=self.api.deployment_stage)
            self.api_key = key
