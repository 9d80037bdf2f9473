//! Read-only calls for noise: a Describe/Get/List call about a resource of the model.

use rand::Rng;
use serde_json::{Value, json};

use super::{Cloud, Request};
use reconciler::terraform::state::Instance;

impl Cloud {
    /// A read-only request about a randomly chosen resource (or `GetCallerIdentity` when no
    /// resource has a read call here). Executing it changes nothing.
    pub fn noise_request(&mut self) -> Request {
        // Only the chosen candidate's request is built: a day asks thousands of times.
        let candidates: Vec<&Instance> = self.resources.iter().filter(|i| describable(i)).collect();
        if candidates.is_empty() {
            return caller_identity();
        }
        let at = self.rng.random_range(0..candidates.len());
        describe(candidates[at]).unwrap_or_else(caller_identity)
    }
}

impl Cloud {
    /// The read call the console or a script makes about the instance at `address` (for
    /// S3 configuration resources, about their bucket); `None` when the model has no
    /// read call for its type.
    pub fn read_request(&self, address: &str) -> Option<Request> {
        let instance = self.resources.iter().find(|i| i.address == address)?;
        describe(instance).or_else(|| {
            let bucket = instance.string_attribute("bucket")?;
            self.resources
                .iter()
                .find(|i| {
                    i.resource_type == "aws_s3_bucket"
                        && i.string_attribute("bucket") == Some(bucket)
                })
                .and_then(describe)
        })
    }
}

/// `GetCallerIdentity`, the read every principal may make.
fn caller_identity() -> Request {
    Request::new("sts.amazonaws.com", "GetCallerIdentity", Value::Null)
}

/// The read call the console or a script typically makes about an instance.
fn describe(instance: &Instance) -> Option<Request> {
    instance.string_attribute("id")?;
    let (source, name, params) = read_call(&instance.resource_type)?;
    Some(Request::new(source, name, params(instance)))
}

/// Whether [`describe`] has a read call for the instance (without building it).
fn describable(instance: &Instance) -> bool {
    instance.string_attribute("id").is_some() && read_call(&instance.resource_type).is_some()
}

/// The read call for a resource type: event source, event name, and the parameters of an
/// instance that has an `id`.
type ReadCall = (&'static str, &'static str, fn(&Instance) -> Value);

fn read_call(resource_type: &str) -> Option<ReadCall> {
    Some(match resource_type {
        "aws_security_group" => (
            "ec2.amazonaws.com",
            "DescribeSecurityGroups",
            |i| json!({"securityGroupSet": {}, "securityGroupIdSet": {"items": [{"groupId": id(i)}]}, "filterSet": {}}),
        ),
        "aws_instance" => (
            "ec2.amazonaws.com",
            "DescribeInstances",
            |i| json!({"instancesSet": {"items": [{"instanceId": id(i)}]}, "filterSet": {}}),
        ),
        "aws_vpc" => (
            "ec2.amazonaws.com",
            "DescribeVpcs",
            |i| json!({"vpcSet": {"items": [{"vpcId": id(i)}]}, "filterSet": {}}),
        ),
        "aws_subnet" => (
            "ec2.amazonaws.com",
            "DescribeSubnets",
            |i| json!({"subnetSet": {"items": [{"subnetId": id(i)}]}, "filterSet": {}}),
        ),
        "aws_s3_bucket" => ("s3.amazonaws.com", "GetBucketVersioning", |i| {
            let bucket = get(i, "bucket");
            json!({"bucketName": bucket, "Host": format!("{bucket}.s3.amazonaws.com"), "versioning": ""})
        }),
        "aws_iam_role" => (
            "iam.amazonaws.com",
            "GetRole",
            |i| json!({"roleName": get(i, "name")}),
        ),
        "aws_lambda_function" => (
            "lambda.amazonaws.com",
            "GetFunction20150331v2",
            |i| json!({"functionName": get(i, "function_name")}),
        ),
        "aws_db_instance" => (
            "rds.amazonaws.com",
            "DescribeDBInstances",
            |i| json!({"dBInstanceIdentifier": get(i, "identifier")}),
        ),
        "aws_sqs_queue" => (
            "sqs.amazonaws.com",
            "GetQueueAttributes",
            |i| json!({"queueUrl": get(i, "url"), "attributeNames": ["All"]}),
        ),
        "aws_sns_topic" => (
            "sns.amazonaws.com",
            "GetTopicAttributes",
            |i| json!({"topicArn": get(i, "arn")}),
        ),
        "aws_cloudwatch_log_group" => (
            "logs.amazonaws.com",
            "DescribeLogGroups",
            |i| json!({"logGroupNamePrefix": get(i, "name")}),
        ),
        "aws_dynamodb_table" => (
            "dynamodb.amazonaws.com",
            "DescribeTable",
            |i| json!({"tableName": get(i, "name")}),
        ),
        "aws_kms_key" => (
            "kms.amazonaws.com",
            "DescribeKey",
            |i| json!({"keyId": get(i, "key_id")}),
        ),
        _ => return None,
    })
}

/// The instance's id.
fn id(instance: &Instance) -> &str {
    instance.string_attribute("id").unwrap_or_default()
}

/// A text attribute of the instance, its id when absent.
fn get(instance: &Instance, key: &str) -> String {
    instance
        .string_attribute(key)
        .unwrap_or(id(instance))
        .to_owned()
}
