//! Service families: the groups scenarios are reported by, named by the kind of
//! infrastructure a resource type belongs to (compute, containers, network, storage,
//! database, identity, security, observability, integration, edge).

/// Every family, in report order.
pub const ALL: [&str; 10] = [
    "compute",
    "containers",
    "network",
    "storage",
    "database",
    "identity",
    "security",
    "observability",
    "integration",
    "edge",
];

/// Type-name prefixes (after `aws_`) and their families; the longest matching prefix wins.
const PREFIXES: [(&str, &str); 47] = [
    ("instance", "compute"),
    ("launch_template", "compute"),
    ("autoscaling_", "compute"),
    ("lambda_", "compute"),
    ("ebs_", "compute"),
    ("volume_attachment", "compute"),
    ("key_pair", "compute"),
    ("placement_group", "compute"),
    ("ecs_", "containers"),
    ("ecr_", "containers"),
    ("eks_", "containers"),
    ("appautoscaling_", "containers"),
    ("vpc", "network"),
    ("subnet", "network"),
    ("route_table", "network"),
    ("route", "network"),
    ("security_group", "network"),
    ("internet_gateway", "network"),
    ("egress_only_internet_gateway", "network"),
    ("nat_gateway", "network"),
    ("eip", "network"),
    ("network_", "network"),
    ("default_", "network"),
    ("flow_log", "network"),
    ("vpn_", "network"),
    ("customer_gateway", "network"),
    ("lb", "network"),
    ("alb", "network"),
    ("s3_", "storage"),
    ("db_", "database"),
    ("rds_", "database"),
    ("dynamodb_", "database"),
    ("elasticache_", "database"),
    ("redshift_", "database"),
    ("iam_", "identity"),
    ("kms_", "security"),
    ("secretsmanager_", "security"),
    ("wafv2_", "security"),
    ("ssm_", "security"),
    ("cloudwatch_", "observability"),
    ("cloudtrail", "observability"),
    ("sns_", "integration"),
    ("sqs_", "integration"),
    ("route53_", "edge"),
    ("route53_resolver_", "network"),
    ("apigatewayv2_", "edge"),
    ("cloudfront_", "edge"),
];

/// The family of a resource type (`aws_eks_node_group` → `containers`); `other` for a type
/// no family names.
pub fn of_type(resource_type: &str) -> &'static str {
    let name = resource_type.strip_prefix("aws_").unwrap_or(resource_type);
    let special = match name {
        "acm_certificate" | "acm_certificate_validation" => Some("edge"),
        "lambda_permission" => Some("compute"),
        "lambda_event_source_mapping" => Some("integration"),
        _ => None,
    };
    special.unwrap_or_else(|| {
        PREFIXES
            .iter()
            .filter(|(prefix, _)| name.starts_with(prefix))
            .max_by_key(|(prefix, _)| prefix.len())
            .map_or("other", |(_, family)| family)
    })
}

/// Event sources of calls on nothing a state holds, and their families.
const SOURCES: [(&str, &str); 6] = [
    ("cloudtrail.amazonaws.com", "observability"),
    ("guardduty.amazonaws.com", "security"),
    ("iam.amazonaws.com", "identity"),
    ("ec2.amazonaws.com", "compute"),
    ("rds.amazonaws.com", "database"),
    ("s3.amazonaws.com", "storage"),
];

/// The family of what a scenario touches: a resource type, or the event source of a call on
/// nothing a state holds; `other` when none is known.
pub fn of(touched: &str) -> &'static str {
    if touched.starts_with("aws_") {
        return of_type(touched);
    }
    SOURCES
        .iter()
        .find(|(source, _)| *source == touched)
        .map_or("other", |(_, family)| family)
}

/// The families of everything a scenario touches, each once, sorted.
pub fn all(touches: &[String]) -> Vec<&'static str> {
    let mut families: Vec<&'static str> = touches.iter().map(|t| of(t)).collect();
    families.sort_unstable();
    families.dedup();
    families
}

/// The resource type of an instance address (`module.m.aws_vpc.main["a"]` → `aws_vpc`).
pub fn type_of_address(address: &str) -> &str {
    address
        .split('.')
        .find(|s| s.starts_with("aws_"))
        .unwrap_or(address)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_fall_into_their_families() {
        assert_eq!(of_type("aws_eks_node_group"), "containers");
        assert_eq!(of_type("aws_route53_record"), "edge");
        assert_eq!(of_type("aws_route53_resolver_query_log_config"), "network");
        assert_eq!(of_type("aws_route_table_association"), "network");
        assert_eq!(of_type("aws_lb_listener_rule"), "network");
        assert_eq!(of_type("aws_s3_bucket_policy"), "storage");
        assert_eq!(of_type("aws_db_subnet_group"), "database");
        assert_eq!(of_type("aws_iam_openid_connect_provider"), "identity");
        assert_eq!(of_type("aws_lambda_event_source_mapping"), "integration");
        assert_eq!(of_type("aws_cloudwatch_log_group"), "observability");
        assert_eq!(of_type("aws_unknown_thing"), "other");
    }

    #[test]
    fn sources_and_touches_map_to_families() {
        assert_eq!(of("guardduty.amazonaws.com"), "security");
        assert_eq!(of("aws_sqs_queue"), "integration");
        assert_eq!(of("unknown.amazonaws.com"), "other");
        let touches = [
            "aws_sqs_queue".to_owned(),
            "aws_sns_topic".to_owned(),
            "aws_vpc".to_owned(),
        ];
        assert_eq!(all(&touches), vec!["integration", "network"]);
    }

    #[test]
    fn addresses_name_their_type() {
        assert_eq!(
            type_of_address("module.net.aws_subnet.private[\"a\"]"),
            "aws_subnet"
        );
        assert_eq!(type_of_address("aws_vpc.main"), "aws_vpc");
    }
}
