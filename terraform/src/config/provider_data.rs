//! Data sources the AWS provider answers from its own settings, without calling AWS.
//!
//! `aws_partition` and `aws_region` (with no argument choosing another region) read only the
//! provider's region: Terraform knows them at plan time, offline too. Where the state holds
//! no instance of such a block, its value is derived here from the `region` the root's
//! `provider "aws"` blocks set (from variables and the locals they read); when a region is not
//! known (not set, or set from anything else), or the blocks disagree, the value stays unknown.

use crate::functions::Value;
use std::collections::BTreeMap;

/// One AWS partition: its name, DNS suffix and reverse DNS prefix.
struct Partition {
    name: &'static str,
    dns_suffix: &'static str,
    reverse_dns_prefix: &'static str,
}

/// The partition of a region name, for the partitions whose naming the AWS documentation
/// gives (`cn-` China, `us-gov-` GovCloud (US), every other region commercial); `None` for
/// the isolated partitions' regions and anything that is not a region name.
fn partition_of(region: &str) -> Option<Partition> {
    let shaped = region.split('-').count() >= 3
        && region
            .rsplit('-')
            .next()
            .is_some_and(|n| n.parse::<u32>().is_ok());
    if !shaped || region.contains("-iso") {
        return None;
    }
    Some(if region.starts_with("cn-") {
        Partition {
            name: "aws-cn",
            dns_suffix: "amazonaws.com.cn",
            reverse_dns_prefix: "cn.com.amazonaws",
        }
    } else if region.starts_with("us-gov-") {
        Partition {
            name: "aws-us-gov",
            dns_suffix: "amazonaws.com",
            reverse_dns_prefix: "com.amazonaws",
        }
    } else {
        Partition {
            name: "aws",
            dns_suffix: "amazonaws.com",
            reverse_dns_prefix: "com.amazonaws",
        }
    })
}

/// The value of a `data` block of `resource_type` the provider answers itself, given the
/// `region` of every `provider "aws"` block of the root; `None` when it is not such a data
/// source, the block sets arguments (`sets_arguments`: another region asked for, a filter), or
/// the regions do not settle it.
pub(super) fn derived(
    resource_type: &str,
    sets_arguments: bool,
    regions: &[Value],
) -> Option<Value> {
    if sets_arguments {
        return None;
    }
    let known: Vec<&str> = regions
        .iter()
        .map(|r| match r {
            Value::String(s) => Some(s.as_str()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let (first, rest) = known.split_first()?;
    let text = |s: &str| Value::String(s.to_owned());
    match resource_type {
        "aws_region" if rest.iter().all(|r| r == first) => Some(Value::Object(BTreeMap::from([
            ("name".to_owned(), text(first)),
            ("id".to_owned(), text(first)),
            ("endpoint".to_owned(), Value::Unknown),
            ("description".to_owned(), Value::Unknown),
        ]))),
        "aws_partition" => {
            let partition = partition_of(first)?;
            let same = rest
                .iter()
                .all(|r| partition_of(r).is_some_and(|p| p.name == partition.name));
            same.then(|| {
                Value::Object(BTreeMap::from([
                    ("partition".to_owned(), text(partition.name)),
                    ("id".to_owned(), text(partition.name)),
                    ("dns_suffix".to_owned(), text(partition.dns_suffix)),
                    (
                        "reverse_dns_prefix".to_owned(),
                        text(partition.reverse_dns_prefix),
                    ),
                ]))
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regions(names: &[&str]) -> Vec<Value> {
        names
            .iter()
            .map(|n| Value::String((*n).to_owned()))
            .collect()
    }

    fn field(value: &Option<Value>, name: &str) -> Option<Value> {
        match value {
            Some(Value::Object(map)) => map.get(name).cloned(),
            _ => None,
        }
    }

    #[test]
    fn the_partition_follows_the_region_name() {
        for (region, partition, suffix) in [
            ("us-east-1", "aws", "amazonaws.com"),
            ("eu-central-2", "aws", "amazonaws.com"),
            ("cn-north-1", "aws-cn", "amazonaws.com.cn"),
            ("us-gov-west-1", "aws-us-gov", "amazonaws.com"),
        ] {
            let value = derived("aws_partition", false, &regions(&[region]));
            assert_eq!(
                field(&value, "partition"),
                Some(Value::String(partition.into()))
            );
            assert_eq!(
                field(&value, "dns_suffix"),
                Some(Value::String(suffix.into()))
            );
        }
        // Isolated partitions and names that are not regions stay unknown.
        for unknown in ["us-iso-east-1", "us-isob-east-1", "local", "${region}"] {
            assert_eq!(
                derived("aws_partition", false, &regions(&[unknown])),
                None,
                "{unknown}"
            );
        }
        // Two providers in one partition settle it; in two partitions they do not.
        let both = derived(
            "aws_partition",
            false,
            &regions(&["us-east-1", "eu-west-1"]),
        );
        assert_eq!(field(&both, "partition"), Some(Value::String("aws".into())));
        assert_eq!(
            derived(
                "aws_partition",
                false,
                &regions(&["us-east-1", "cn-north-1"])
            ),
            None
        );
    }

    #[test]
    fn the_region_is_known_only_when_every_provider_sets_the_same_one() {
        let one = derived("aws_region", false, &regions(&["eu-west-1"]));
        assert_eq!(field(&one, "name"), Some(Value::String("eu-west-1".into())));
        assert_eq!(field(&one, "endpoint"), Some(Value::Unknown));
        assert_eq!(
            derived("aws_region", false, &regions(&["eu-west-1", "us-east-1"])),
            None
        );
        assert_eq!(derived("aws_region", false, &[Value::Unknown]), None);
        assert_eq!(derived("aws_region", false, &[]), None);
        assert_eq!(derived("aws_region", true, &regions(&["eu-west-1"])), None);
        assert_eq!(
            derived("aws_caller_identity", false, &regions(&["eu-west-1"])),
            None
        );
    }
}
