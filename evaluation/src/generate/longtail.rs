//! The long tail: real write calls on managed resources that no shipped rule explains. Each
//! acts on a resource the project manages but changes nothing its Terraform state holds (a
//! manual snapshot, a queue purged, a subscription filter that would be a resource of its
//! own), so a correct reconciliation reports it as unexplained and writes nothing.
//!
//! Which calls have no rule is asked of the knowledge base when scenarios are generated
//! ([`events`] leaves out every call a rule covers), so a rule added later retires its
//! scenarios at the next generation instead of leaving them stale.

use super::change::{req, text};
use super::events::Event;
use knowledge::rules::RuleSet;
use reconciler::terraform::state::{Instance, Mode, State};
use serde_json::{Value, json};

/// The long-tail calls on the managed instances of `state` that no shipped rule explains.
pub fn unexplained(state: &State) -> Result<Vec<Event>, String> {
    let rules = RuleSet::bundled().map_err(|e| e.to_string())?;
    Ok(events(state, rules))
}

/// The long-tail calls on the managed instances of `state` that no rule of `rules` explains.
fn events(state: &State, rules: &RuleSet) -> Vec<Event> {
    let all: Vec<&Instance> = state
        .instances
        .iter()
        .filter(|i| i.mode == Mode::Managed && i.deposed.is_none())
        .collect();
    all.iter()
        .flat_map(|i| calls(i, &all))
        .filter(|e| {
            rules
                .find(&e.request.event_source, &e.request.event_name)
                .is_none()
        })
        .collect()
}

/// Whether the project manages a resource of `resource_type` whose `key` is `value`: the
/// call then changes that resource, which is not the long tail.
fn owned(all: &[&Instance], resource_type: &str, key: &str, value: &str) -> bool {
    all.iter()
        .any(|i| i.resource_type == resource_type && i.string_attribute(key) == Some(value))
}

/// The region and account of an instance's ARN.
fn place(instance: &Instance) -> Option<(String, String)> {
    let arn = instance.string_attribute("arn")?;
    let mut parts = arn.split(':').skip(3);
    Some((parts.next()?.to_owned(), parts.next()?.to_owned()))
}

fn event(
    generator: &'static str,
    instance: &Instance,
    what: String,
    request: crate::sim::Request,
    response: Value,
) -> Event {
    Event {
        generator,
        what,
        request,
        response,
        address: Some(instance.address.clone()),
    }
}

/// The long-tail calls that apply to one instance.
fn calls(i: &Instance, all: &[&Instance]) -> Vec<Event> {
    let mut out = Vec::new();
    match i.resource_type.as_str() {
        "aws_dynamodb_table" => {
            let name = text(i, "name");
            // Contributor Insights is its own resource (aws_dynamodb_contributor_insights).
            if !owned(all, "aws_dynamodb_contributor_insights", "table_name", name) {
                out.push(event(
                    "dynamodb-contributor-insights",
                    i,
                    format!("enabled CloudWatch Contributor Insights on table {name}"),
                    req(
                        "dynamodb.amazonaws.com",
                        "UpdateContributorInsights",
                        json!({"tableName": name, "contributorInsightsAction": "ENABLE"}),
                    ),
                    json!({"tableName": name, "contributorInsightsStatus": "ENABLING"}),
                ));
            }
        }
        "aws_kms_key" => {
            let key_id = text(i, "key_id");
            out.push(event(
                "kms-rotate-on-demand",
                i,
                format!("rotated KMS key {key_id} on demand"),
                req(
                    "kms.amazonaws.com",
                    "RotateKeyOnDemand",
                    json!({"keyId": key_id}),
                ),
                json!({"keyId": text(i, "arn")}),
            ));
        }
        "aws_sqs_queue" => {
            let url = text(i, "url");
            out.push(event(
                "sqs-purge",
                i,
                format!("purged every message of queue {url}"),
                req("sqs.amazonaws.com", "PurgeQueue", json!({"queueUrl": url})),
                Value::Null,
            ));
        }
        "aws_cloudwatch_log_group" => {
            let name = text(i, "name");
            if let (Some((region, account)), false) = (
                place(i),
                owned(
                    all,
                    "aws_cloudwatch_log_subscription_filter",
                    "log_group_name",
                    name,
                ),
            ) {
                out.push(event(
                    "logs-subscription-filter",
                    i,
                    format!("streamed log group {name} to another account's destination"),
                    req(
                        "logs.amazonaws.com",
                        "PutSubscriptionFilter",
                        json!({"logGroupName": name, "filterName": "to-siem", "filterPattern": "",
                               "destinationArn": format!("arn:aws:logs:{region}:{account}:destination:siem")}),
                    ),
                    Value::Null,
                ));
            }
        }
        "aws_db_instance" => {
            let id = text(i, "identifier");
            let snapshot = format!("{id}-before-upgrade");
            out.push(event(
                "rds-manual-snapshot",
                i,
                format!("took a manual snapshot of DB instance {id}"),
                req(
                    "rds.amazonaws.com",
                    "CreateDBSnapshot",
                    json!({"dBSnapshotIdentifier": snapshot, "dBInstanceIdentifier": id}),
                ),
                json!({"dBSnapshotIdentifier": snapshot, "dBInstanceIdentifier": id,
                       "snapshotType": "manual", "status": "creating",
                       "engine": text(i, "engine"), "allocatedStorage": i.attributes["allocated_storage"]}),
            ));
        }
        "aws_ssm_parameter" => {
            let name = text(i, "name");
            out.push(event(
                "ssm-label-parameter",
                i,
                format!("labelled the current version of parameter {name} `stable`"),
                req(
                    "ssm.amazonaws.com",
                    "LabelParameterVersion",
                    json!({"name": name, "labels": ["stable"]}),
                ),
                json!({"invalidLabels": [], "parameterVersion": i.attributes["version"]}),
            ));
        }
        "aws_cloudwatch_metric_alarm" => {
            let name = text(i, "alarm_name");
            out.push(event(
                "cloudwatch-set-alarm-state",
                i,
                format!("set alarm {name} to ALARM to test its actions"),
                req(
                    "monitoring.amazonaws.com",
                    "SetAlarmState",
                    json!({"alarmName": name, "stateValue": "ALARM", "stateReason": "testing the alarm actions"}),
                ),
                Value::Null,
            ));
        }
        "aws_s3_bucket" => {
            let bucket = text(i, "bucket");
            // Bucket notifications are their own resource (aws_s3_bucket_notification).
            if !owned(all, "aws_s3_bucket_notification", "bucket", bucket) {
                out.push(event(
                    "s3-bucket-notification",
                    i,
                    format!("turned on EventBridge notifications for s3://{bucket}"),
                    req(
                        "s3.amazonaws.com",
                        "PutBucketNotification",
                        json!({"bucketName": bucket, "Host": format!("{bucket}.s3.amazonaws.com"), "notification": "",
                               "NotificationConfiguration": {"xmlns": "http://s3.amazonaws.com/doc/2006-03-01/",
                                                             "EventBridgeConfiguration": ""}}),
                    ),
                    Value::Null,
                ));
            }
        }
        "aws_ecs_cluster" => {
            let cluster = text(i, "name");
            if let Some((region, account)) = place(i) {
                let task = format!(
                    "arn:aws:ecs:{region}:{account}:task/{cluster}/0f9de4e1b2c34a5d8e6f7a8b9c0d1e2f"
                );
                out.push(event(
                    "ecs-stop-task",
                    i,
                    format!("stopped a running task of cluster {cluster}"),
                    req(
                        "ecs.amazonaws.com",
                        "StopTask",
                        json!({"cluster": cluster, "task": task, "reason": "stuck deployment"}),
                    ),
                    json!({"task": {"taskArn": task, "clusterArn": text(i, "arn"), "desiredStatus": "STOPPED",
                                    "lastStatus": "RUNNING", "stoppedReason": "stuck deployment"}}),
                ));
            }
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_a_rule_covers_are_left_out() {
        let state = State::parse(
            br#"{"version":4,"terraform_version":"1.9.0","serial":1,"lineage":"l","resources":[
              {"mode":"managed","type":"aws_sqs_queue","name":"q","provider":"provider[\"registry.terraform.io/hashicorp/aws\"]",
               "instances":[{"schema_version":0,"attributes":{"id":"u","url":"https://sqs.us-east-1.amazonaws.com/1/q"}}]}]}"#,
            "test",
        )
        .expect("the state parses");
        let none = RuleSet::from_rules(Vec::new()).expect("an empty rule set");
        assert_eq!(events(&state, &none).len(), 1);
        let purge = r#"service = "sqs"
event_source = "sqs.amazonaws.com"

[[rule]]
api = "PurgeQueue"
resource = "aws_sqs_queue"
kind = "operational"
risk = "low"
summary = "purged a queue"
identity = [{ path = "queueUrl" }]
"#;
        let covered = RuleSet::from_texts([("sqs.toml", purge)]).expect("the rule parses");
        assert!(events(&state, &covered).is_empty());
    }
}
