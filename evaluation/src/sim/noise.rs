//! Read-only calls for noise: a Describe/Get/List call about a resource of the model.

use rand::Rng;
use serde_json::{Value, json};

use super::{Cloud, Request};

impl Cloud {
    /// A read-only request about a randomly chosen resource (or `GetCallerIdentity` when no
    /// resource has a read call here). Executing it changes nothing.
    pub fn noise_request(&mut self) -> Request {
        let candidates: Vec<Request> = self.resources.iter().filter_map(describe).collect();
        if candidates.is_empty() {
            return Request::new("sts.amazonaws.com", "GetCallerIdentity", Value::Null);
        }
        let at = self.rng.random_range(0..candidates.len());
        candidates[at].clone()
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

/// The read call the console or a script typically makes about an instance.
fn describe(instance: &reconciler::terraform::state::Instance) -> Option<Request> {
    let id = instance.string_attribute("id")?;
    let get = |k: &str| instance.string_attribute(k).unwrap_or(id).to_owned();
    let (source, name, params) = match instance.resource_type.as_str() {
        "aws_security_group" => (
            "ec2.amazonaws.com",
            "DescribeSecurityGroups",
            json!({"securityGroupSet": {}, "securityGroupIdSet": {"items": [{"groupId": id}]}, "filterSet": {}}),
        ),
        "aws_instance" => (
            "ec2.amazonaws.com",
            "DescribeInstances",
            json!({"instancesSet": {"items": [{"instanceId": id}]}, "filterSet": {}}),
        ),
        "aws_vpc" => (
            "ec2.amazonaws.com",
            "DescribeVpcs",
            json!({"vpcSet": {"items": [{"vpcId": id}]}, "filterSet": {}}),
        ),
        "aws_subnet" => (
            "ec2.amazonaws.com",
            "DescribeSubnets",
            json!({"subnetSet": {"items": [{"subnetId": id}]}, "filterSet": {}}),
        ),
        "aws_s3_bucket" => {
            let bucket = get("bucket");
            (
                "s3.amazonaws.com",
                "GetBucketVersioning",
                json!({"bucketName": bucket, "Host": format!("{bucket}.s3.amazonaws.com"), "versioning": ""}),
            )
        }
        "aws_iam_role" => (
            "iam.amazonaws.com",
            "GetRole",
            json!({"roleName": get("name")}),
        ),
        "aws_lambda_function" => (
            "lambda.amazonaws.com",
            "GetFunction20150331v2",
            json!({"functionName": get("function_name")}),
        ),
        "aws_db_instance" => (
            "rds.amazonaws.com",
            "DescribeDBInstances",
            json!({"dBInstanceIdentifier": get("identifier")}),
        ),
        "aws_sqs_queue" => (
            "sqs.amazonaws.com",
            "GetQueueAttributes",
            json!({"queueUrl": get("url"), "attributeNames": ["All"]}),
        ),
        "aws_sns_topic" => (
            "sns.amazonaws.com",
            "GetTopicAttributes",
            json!({"topicArn": get("arn")}),
        ),
        "aws_cloudwatch_log_group" => (
            "logs.amazonaws.com",
            "DescribeLogGroups",
            json!({"logGroupNamePrefix": get("name")}),
        ),
        "aws_dynamodb_table" => (
            "dynamodb.amazonaws.com",
            "DescribeTable",
            json!({"tableName": get("name")}),
        ),
        "aws_kms_key" => (
            "kms.amazonaws.com",
            "DescribeKey",
            json!({"keyId": get("key_id")}),
        ),
        _ => return None,
    };
    Some(Request::new(source, name, params))
}
