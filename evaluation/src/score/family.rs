//! Service families: results are reported per family of the resource types (or, for calls on
//! nothing a state holds, the event sources) a scenario touches.

/// Resource type prefixes and event sources, and their family. The first match wins, so
/// longer prefixes come before shorter ones.
const FAMILIES: [(&str, &str); 44] = [
    ("aws_instance", "compute"),
    ("aws_launch_template", "compute"),
    ("aws_autoscaling_", "compute"),
    ("aws_lambda_", "compute"),
    ("aws_ecs_", "compute"),
    ("aws_ecr_", "compute"),
    ("aws_eks_", "compute"),
    ("aws_appautoscaling_", "compute"),
    ("aws_vpc", "network"),
    ("aws_subnet", "network"),
    ("aws_route53", "network"),
    ("aws_route", "network"),
    ("aws_security_group", "network"),
    ("aws_internet_gateway", "network"),
    ("aws_nat_gateway", "network"),
    ("aws_eip", "network"),
    ("aws_lb", "network"),
    ("aws_alb", "network"),
    ("aws_cloudfront_", "network"),
    ("aws_apigatewayv2_", "network"),
    ("aws_acm_", "network"),
    ("aws_wafv2_", "network"),
    ("aws_s3_", "storage"),
    ("aws_ebs_", "storage"),
    ("aws_efs_", "storage"),
    ("aws_db_", "database"),
    ("aws_rds_", "database"),
    ("aws_dynamodb_", "database"),
    ("aws_elasticache_", "database"),
    ("aws_redshift_", "database"),
    ("aws_iam_", "identity"),
    ("aws_kms_", "identity"),
    ("aws_secretsmanager_", "identity"),
    ("aws_cloudwatch_", "observability"),
    ("aws_cloudtrail", "observability"),
    ("aws_sqs_", "messaging"),
    ("aws_sns_", "messaging"),
    ("aws_ssm_", "management"),
    ("cloudtrail.amazonaws.com", "observability"),
    ("guardduty.amazonaws.com", "security"),
    ("iam.amazonaws.com", "identity"),
    ("ec2.amazonaws.com", "compute"),
    ("rds.amazonaws.com", "database"),
    ("s3.amazonaws.com", "storage"),
];

/// The family of a resource type or event source; `other` when none is known.
pub fn of(touched: &str) -> &'static str {
    FAMILIES
        .iter()
        .find(|(prefix, _)| touched.starts_with(prefix))
        .map_or("other", |(_, family)| family)
}

/// The families of everything a scenario touches, each once, sorted.
pub fn all(touches: &[String]) -> Vec<&'static str> {
    let mut families: Vec<&'static str> = touches.iter().map(|t| of(t)).collect();
    families.sort_unstable();
    families.dedup();
    families
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_and_sources_map_to_families() {
        assert_eq!(of("aws_route53_record"), "network");
        assert_eq!(of("aws_route_table"), "network");
        assert_eq!(of("aws_instance"), "compute");
        assert_eq!(of("aws_s3_bucket_policy"), "storage");
        assert_eq!(of("aws_dynamodb_table"), "database");
        assert_eq!(of("aws_iam_role_policy"), "identity");
        assert_eq!(of("guardduty.amazonaws.com"), "security");
        assert_eq!(of("aws_something_new"), "other");
        let touches = [
            "aws_sqs_queue".to_owned(),
            "aws_sns_topic".to_owned(),
            "aws_vpc".to_owned(),
        ];
        assert_eq!(all(&touches), vec!["messaging", "network"]);
    }
}
