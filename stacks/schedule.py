"""Daily jobs on EventBridge rules: the self-check (with an alarm when the canary fails or goes
silent) and index tiering."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from constructs import Construct


def daily(scope: Construct, hour: int, fn: lambda_.IFunction, description: str, target: bool) -> events.Rule:
    """``target=False`` (the local variant) keeps the rule without its Lambda target."""
    rule = events.Rule(scope, "Daily", schedule=events.Schedule.cron(minute="17", hour=str(hour)),
                       description=description)
    if target:
        rule.add_target(targets.LambdaFunction(fn, retry_attempts=2))
    return rule


class TieringSchedule(Construct):
    """Index tiering once a day, on its own rule, an hour after the canary."""

    def __init__(self, scope: Construct, construct_id: str, *, fn: lambda_.IFunction, target: bool = True) -> None:
        super().__init__(scope, construct_id)
        self.rule = daily(self, 4, fn, "agent-memory tiering: old, unimportant, unrecalled vectors go cold", target)


class SelfCheckSchedule(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, fn: lambda_.IFunction, target: bool = True) -> None:
        super().__init__(scope, construct_id)
        self.rule = daily(self, 3, fn, "agent-memory canary: write, recall, check, clean up", target)
        metric = cw.Metric(namespace="AgentMemory", metric_name="SelfCheckSuccess",
                           dimensions_map={"service": "selfcheck"}, statistic="Minimum",
                           period=Duration.days(1))
        self.alarm = cw.Alarm(
            self, "Failing", metric=metric, threshold=1, evaluation_periods=1,
            comparison_operator=cw.ComparisonOperator.LESS_THAN_THRESHOLD,
            treat_missing_data=cw.TreatMissingData.BREACHING,
            alarm_description="The daily canary failed or did not report: recall is broken or the schedule stopped.",
        )
