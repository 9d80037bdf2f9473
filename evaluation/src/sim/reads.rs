//! Whether a call the simulator records only reads (CloudTrail's `readOnly`), decided here
//! and nowhere else: the simulator's own list of the read calls it makes, each one a
//! `Describe`/`Get`/`List` call that the service's CloudTrail documentation shows with
//! `"readOnly": true` and the IAM Service Authorization Reference gives the Read or List
//! access level. Every other call it records is a write. It shares no code with the
//! reconciler's classification, so the benchmark can catch that classification's mistakes.

/// The read calls the simulator records, by event source and event name as CloudTrail
/// writes it (Lambda's with its version suffix).
const READS: &[(&str, &str)] = &[
    ("ec2.amazonaws.com", "DescribeInstances"),
    ("ec2.amazonaws.com", "DescribeSecurityGroups"),
    ("ec2.amazonaws.com", "DescribeSubnets"),
    ("ec2.amazonaws.com", "DescribeVpcs"),
    ("s3.amazonaws.com", "GetBucketVersioning"),
    ("s3.amazonaws.com", "GetObject"),
    ("s3.amazonaws.com", "ListBuckets"),
    ("iam.amazonaws.com", "GetRole"),
    ("iam.amazonaws.com", "ListRoles"),
    ("lambda.amazonaws.com", "GetFunction20150331v2"),
    ("lambda.amazonaws.com", "ListFunctions20150331"),
    ("rds.amazonaws.com", "DescribeDBInstances"),
    ("sqs.amazonaws.com", "GetQueueAttributes"),
    ("sqs.amazonaws.com", "ListQueues"),
    ("sns.amazonaws.com", "GetTopicAttributes"),
    ("logs.amazonaws.com", "DescribeLogGroups"),
    ("dynamodb.amazonaws.com", "DescribeTable"),
    ("kms.amazonaws.com", "DescribeKey"),
    ("kms.amazonaws.com", "ListKeys"),
    ("sts.amazonaws.com", "GetCallerIdentity"),
];

/// Whether the call `event_name` (as recorded) of `event_source` only reads.
pub fn is_read(event_source: &str, event_name: &str) -> bool {
    READS.contains(&(event_source, event_name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes() {
        assert!(is_read("ec2.amazonaws.com", "DescribeInstances"));
        assert!(is_read("lambda.amazonaws.com", "GetFunction20150331v2"));
        assert!(!is_read(
            "ec2.amazonaws.com",
            "AuthorizeSecurityGroupIngress"
        ));
        assert!(!is_read("kms.amazonaws.com", "CreateGrant"));
        // A call's read status belongs to its service.
        assert!(!is_read("s3.amazonaws.com", "DescribeInstances"));
    }
}
