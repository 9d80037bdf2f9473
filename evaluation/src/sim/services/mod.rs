//! The services the simulator models: what each is called in CloudTrail, the CLI and the Go
//! SDK, and the handler of each write call.

mod apigw;
mod attached;
mod autoscaling;
pub(super) mod cloudwatch;
mod dynamodb;
mod ec2;
mod eks;
mod elbv2;
mod iam;
mod lambda;
mod misc;
mod more;
mod rds;
mod s3;
mod s3config;
mod sg;
mod vpc;

use super::ctx::{ApiResult, Ctx};
use serde_json::Value;

/// A call handler: changes the model and returns the response elements.
pub type Handler = fn(&mut Ctx<'_>, &Value) -> ApiResult;

/// A modelled AWS service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// Amazon EC2.
    Ec2,
    /// Amazon S3.
    S3,
    /// IAM (global, recorded in us-east-1).
    Iam,
    /// AWS Lambda.
    Lambda,
    /// Amazon RDS.
    Rds,
    /// Amazon DynamoDB.
    DynamoDb,
    /// Elastic Load Balancing v2.
    Elbv2,
    /// EC2 Auto Scaling.
    AutoScaling,
    /// Amazon SNS.
    Sns,
    /// Amazon SQS.
    Sqs,
    /// Amazon CloudWatch (alarms).
    CloudWatch,
    /// Amazon CloudWatch Logs.
    Logs,
    /// AWS KMS.
    Kms,
    /// Amazon Route 53 (global, recorded in us-east-1).
    Route53,
    /// AWS Systems Manager.
    Ssm,
    /// AWS Secrets Manager.
    SecretsManager,
    /// Amazon ECS.
    Ecs,
    /// Amazon ECR.
    Ecr,
    /// AWS STS (read-only noise only).
    Sts,
    /// Amazon API Gateway (HTTP APIs).
    ApiGateway,
    /// Amazon EKS.
    Eks,
    /// Amazon ElastiCache.
    ElastiCache,
    /// Amazon Redshift (subnet groups).
    Redshift,
    /// Application Auto Scaling.
    ApplicationAutoScaling,
    /// AWS WAF (v2).
    Wafv2,
    /// Amazon S3 Express One Zone (directory buckets).
    S3Express,
}

/// Per service: event source, CLI name, Go SDK id and version, console user agent.
const TABLE: [(Service, &str, &str, &str, &str, &str); 26] = [
    (
        Service::Ec2,
        "ec2.amazonaws.com",
        "ec2",
        "ec2",
        "1.193.0",
        "console.ec2.amazonaws.com",
    ),
    (
        Service::S3,
        "s3.amazonaws.com",
        "s3api",
        "s3",
        "1.71.0",
        S3_CONSOLE,
    ),
    (
        Service::Iam,
        "iam.amazonaws.com",
        "iam",
        "iam",
        "1.38.2",
        "AWS Internal",
    ),
    (
        Service::Lambda,
        "lambda.amazonaws.com",
        "lambda",
        "lambda",
        "1.69.1",
        "AWS Internal",
    ),
    (
        Service::Rds,
        "rds.amazonaws.com",
        "rds",
        "rds",
        "1.93.0",
        "AWS Internal",
    ),
    (
        Service::DynamoDb,
        "dynamodb.amazonaws.com",
        "dynamodb",
        "dynamodb",
        "1.38.0",
        "console.amazonaws.com",
    ),
    (
        Service::Elbv2,
        "elasticloadbalancing.amazonaws.com",
        "elbv2",
        "elasticloadbalancingv2",
        "1.43.3",
        "console.amazonaws.com",
    ),
    (
        Service::AutoScaling,
        "autoscaling.amazonaws.com",
        "autoscaling",
        "autoscaling",
        "1.51.1",
        "console.amazonaws.com",
    ),
    (
        Service::Sns,
        "sns.amazonaws.com",
        "sns",
        "sns",
        "1.33.7",
        "AWS Internal",
    ),
    (
        Service::Sqs,
        "sqs.amazonaws.com",
        "sqs",
        "sqs",
        "1.37.2",
        "AWS Internal",
    ),
    (
        Service::CloudWatch,
        "monitoring.amazonaws.com",
        "cloudwatch",
        "cloudwatch",
        "1.43.3",
        "console.amazonaws.com",
    ),
    (
        Service::Logs,
        "logs.amazonaws.com",
        "logs",
        "cloudwatchlogs",
        "1.45.0",
        "AWS Internal",
    ),
    (
        Service::Kms,
        "kms.amazonaws.com",
        "kms",
        "kms",
        "1.37.7",
        "AWS Internal",
    ),
    (
        Service::Route53,
        "route53.amazonaws.com",
        "route53",
        "route53",
        "1.46.3",
        "AWS Internal",
    ),
    (
        Service::Ssm,
        "ssm.amazonaws.com",
        "ssm",
        "ssm",
        "1.56.0",
        "AWS Internal",
    ),
    (
        Service::SecretsManager,
        "secretsmanager.amazonaws.com",
        "secretsmanager",
        "secretsmanager",
        "1.34.7",
        "AWS Internal",
    ),
    (
        Service::Ecs,
        "ecs.amazonaws.com",
        "ecs",
        "ecs",
        "1.52.1",
        "AWS Internal",
    ),
    (
        Service::Ecr,
        "ecr.amazonaws.com",
        "ecr",
        "ecr",
        "1.36.7",
        "AWS Internal",
    ),
    (
        Service::Sts,
        "sts.amazonaws.com",
        "sts",
        "sts",
        "1.33.2",
        "AWS Internal",
    ),
    (
        Service::ApiGateway,
        "apigateway.amazonaws.com",
        "apigatewayv2",
        "apigatewayv2",
        "1.28.3",
        "AWS Internal",
    ),
    (
        Service::Eks,
        "eks.amazonaws.com",
        "eks",
        "eks",
        "1.56.0",
        "AWS Internal",
    ),
    (
        Service::ElastiCache,
        "elasticache.amazonaws.com",
        "elasticache",
        "elasticache",
        "1.44.0",
        "AWS Internal",
    ),
    (
        Service::Redshift,
        "redshift.amazonaws.com",
        "redshift",
        "redshift",
        "1.53.0",
        "AWS Internal",
    ),
    (
        Service::ApplicationAutoScaling,
        "application-autoscaling.amazonaws.com",
        "application-autoscaling",
        "applicationautoscaling",
        "1.34.0",
        "AWS Internal",
    ),
    (
        Service::Wafv2,
        "wafv2.amazonaws.com",
        "wafv2",
        "wafv2",
        "1.55.0",
        "AWS Internal",
    ),
    (
        Service::S3Express,
        "s3express.amazonaws.com",
        "s3api",
        "s3",
        "1.71.0",
        S3_CONSOLE,
    ),
];

/// The S3 console's user agent, brackets included as S3 records them.
const S3_CONSOLE: &str = "[S3Console/0.4, aws-internal/3 aws-sdk-java/1.12.750 Linux/5.10.223-190.873.amzn2int.x86_64 OpenJDK_64-Bit_Server_VM/25.412-b09 java/1.8.0_412 vendor/Oracle_Corporation cfg/retry-mode/standard]";

/// The version suffixes CloudTrail appends to Lambda event names.
const LAMBDA_SUFFIXES: [(&str, &str); 15] = [
    ("RemovePermission", "20150331v2"),
    ("UpdateFunctionConfiguration", "20150331v2"),
    ("UpdateFunctionCode", "20150331v2"),
    ("GetFunction", "20150331v2"),
    ("GetFunctionConfiguration", "20150331v2"),
    ("ListFunctions", "20150331"),
    ("PutFunctionConcurrency", "20171031"),
    ("TagResource", "20170331v2"),
    ("UntagResource", "20170331v2"),
    ("UpdateFunctionUrlConfig", "20211031"),
    ("UpdateFunctionEventInvokeConfig", "20190925"),
    ("PutProvisionedConcurrencyConfig", "20190930"),
    ("DeleteProvisionedConcurrencyConfig", "20190930"),
    ("PutFunctionRecursionConfig", "20240831"),
    ("DeleteLayerVersion", "20181031"),
];

impl Service {
    /// The service of an event source.
    pub fn from_source(source: &str) -> Option<Service> {
        TABLE.iter().find(|row| row.1 == source).map(|row| row.0)
    }

    fn row(
        self,
    ) -> &'static (
        Service,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    ) {
        TABLE.iter().find(|row| row.0 == self).unwrap_or(&TABLE[0])
    }

    /// `eventSource`.
    pub fn source(self) -> &'static str {
        self.row().1
    }

    /// The CLI's service name, `s3api`.
    pub fn cli_name(self) -> &'static str {
        self.row().2
    }

    /// The Go SDK v2 service id in Terraform's user agent, `api/ec2#...`.
    pub fn sdk_id(self) -> &'static str {
        self.row().3
    }

    /// The Go SDK v2 service module version.
    pub fn sdk_version(self) -> &'static str {
        self.row().4
    }

    /// The console's user agent for this service.
    pub fn console_agent(self) -> &'static str {
        self.row().5
    }

    /// The CLI command of an API: `AuthorizeSecurityGroupIngress` →
    /// `authorize-security-group-ingress` (S3's lifecycle call is the CLI's
    /// `put-bucket-lifecycle-configuration`).
    pub fn cli_command(self, api: &str) -> String {
        if self == Service::S3 && api == "PutBucketLifecycle" {
            return "put-bucket-lifecycle-configuration".to_owned();
        }
        let mut out = String::new();
        let chars: Vec<char> = api.chars().collect();
        for (n, c) in chars.iter().enumerate() {
            let next_lower = chars.get(n + 1).is_some_and(|c| c.is_ascii_lowercase());
            let prev_lower = n > 0 && chars[n - 1].is_ascii_lowercase();
            if c.is_ascii_uppercase() && n > 0 && (prev_lower || next_lower) {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    }

    /// The event name as CloudTrail writes it: Lambda's carry a version suffix.
    pub fn event_name(self, name: &str) -> String {
        if self != Service::Lambda || self.api_name(name) != name {
            return name.to_owned();
        }
        match LAMBDA_SUFFIXES.iter().find(|(api, _)| *api == name) {
            Some((api, suffix)) => format!("{api}{suffix}"),
            None => format!("{name}20150331"),
        }
    }

    /// The API operation an event name records. CloudTrail names Lambda's events after the
    /// version of the Lambda API the call was made against: the operation, the version's date
    /// (`20150331` for the 2015-03-31 API, a later date for an operation added since) and at
    /// times `v` and a revision (`UpdateFunctionConfiguration20150331v2`). The other services
    /// the simulator models record the operation's name as it is.
    pub fn api_name(self, event_name: &str) -> &str {
        if self != Service::Lambda {
            return event_name;
        }
        let dated = match event_name.rsplit_once('v') {
            Some((head, revision)) if all_digits(revision) => head,
            _ => event_name,
        };
        match dated.len().checked_sub(8) {
            Some(cut) if cut > 0 && all_digits(&dated[cut..]) => &dated[..cut],
            _ => event_name,
        }
    }

    /// The region a call is recorded in: global services record us-east-1.
    pub fn region(self, region: &str) -> String {
        match self {
            Service::Iam | Service::Route53 => "us-east-1".to_owned(),
            _ => region.to_owned(),
        }
    }

    /// The host name the client connected to.
    pub fn host(self, region: &str, request: &Value) -> String {
        match self {
            Service::Iam => "iam.amazonaws.com".to_owned(),
            Service::Route53 => "route53.amazonaws.com".to_owned(),
            Service::S3Express => format!("s3express-control.{region}.amazonaws.com"),
            Service::S3 => request
                .get("Host")
                .and_then(Value::as_str)
                .map_or_else(|| format!("s3.{region}.amazonaws.com"), str::to_owned),
            _ => format!(
                "{}.{region}.amazonaws.com",
                self.source().trim_end_matches(".amazonaws.com")
            ),
        }
    }

    /// The handler of a write call, by its API name.
    pub fn handler(self, api: &str) -> Option<Handler> {
        self.own_handler(api)
            .or_else(|| more::handler(self, api))
            .or_else(|| attached::handler(self, api))
    }

    /// The handler of a call in the service's own module.
    fn own_handler(self, api: &str) -> Option<Handler> {
        match self {
            Service::ApiGateway => apigw::handler(api),
            Service::Eks | Service::ElastiCache => eks::handler(self, api),
            Service::Ec2 => ec2::handler(api),
            Service::S3 => s3::handler(api).or_else(|| s3config::handler(api)),
            Service::S3Express => s3config::express_handler(api),
            Service::Iam => iam::handler(api),
            Service::Lambda => lambda::handler(api),
            Service::Rds => rds::handler(api),
            Service::DynamoDb => dynamodb::handler(api),
            Service::Elbv2 => elbv2::handler(api),
            Service::AutoScaling => autoscaling::handler(api),
            Service::CloudWatch | Service::Logs => cloudwatch::handler(self, api),
            Service::Sns
            | Service::Sqs
            | Service::Kms
            | Service::Route53
            | Service::Ssm
            | Service::SecretsManager
            | Service::Ecs
            | Service::Ecr => misc::handler(self, api),
            Service::Sts | Service::Redshift | Service::ApplicationAutoScaling | Service::Wafv2 => {
                None
            }
        }
    }
}

/// Whether `text` is one or more ASCII digits.
fn all_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lambda_event_names_name_their_operation() {
        let lambda = |name| Service::Lambda.api_name(name);
        assert_eq!(
            lambda("UpdateFunctionConfiguration20150331v2"),
            "UpdateFunctionConfiguration"
        );
        assert_eq!(lambda("ListFunctions20150331"), "ListFunctions");
        assert_eq!(
            lambda("PutFunctionConcurrency20171031"),
            "PutFunctionConcurrency"
        );
        assert_eq!(lambda("TagResource20170331v2"), "TagResource");
        // Already an operation's name, or a suffix that is not a date.
        assert_eq!(lambda("CreateFunction"), "CreateFunction");
        assert_eq!(lambda("RemovePermission"), "RemovePermission");
        assert_eq!(lambda("Invoke2015v2"), "Invoke2015v2");
        assert_eq!(lambda("20150331"), "20150331");
        assert_eq!(lambda("Xv12345678"), "Xv12345678");
        // Only Lambda's names carry a version.
        assert_eq!(
            Service::Ec2.api_name("DescribeInstances20150331"),
            "DescribeInstances20150331"
        );
    }

    #[test]
    fn cli_commands_are_kebab_case() {
        assert_eq!(
            Service::Ec2.cli_command("AuthorizeSecurityGroupIngress"),
            "authorize-security-group-ingress"
        );
        assert_eq!(
            Service::Rds.cli_command("ModifyDBInstance"),
            "modify-db-instance"
        );
        assert_eq!(Service::Iam.cli_command("TagRole"), "tag-role");
    }

    #[test]
    fn lambda_names_get_their_suffix() {
        assert_eq!(
            Service::Lambda.event_name("UpdateFunctionConfiguration"),
            "UpdateFunctionConfiguration20150331v2"
        );
        assert_eq!(
            Service::Lambda.event_name("PutFunctionConcurrency20171031"),
            "PutFunctionConcurrency20171031"
        );
        assert_eq!(Service::Ec2.event_name("CreateTags"), "CreateTags");
    }
}
