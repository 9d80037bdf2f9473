//! A bucket's canned ACL as Terraform sees it.
//!
//! The provider reads `acl` of `aws_s3_bucket_acl` back from the resource id, never from AWS,
//! and the bucket's grants into `access_control_policy`. A canned ACL set outside Terraform
//! (`PutBucketAcl` with `x-amz-acl`) therefore leaves the state's `acl` as it was and changes
//! `access_control_policy`: besides the `acl` the code would write, the change sets the grants
//! the canned ACL gives (the table of canned ACLs in the Amazon S3 user guide), the bucket's
//! owner in the state keeping full control.

use super::effect::{Change, Effect};
use crate::terraform::state::StateIndex;
use crate::terraform::values::lookup;
use serde_json::{Value, json};

/// The type whose `acl` the provider reads from its id.
const BUCKET_ACL: &str = "aws_s3_bucket_acl";

/// The effects with each canned ACL set on a managed bucket ACL followed by the grants it
/// gives, as a change of `access_control_policy`.
pub(super) fn with_grants(effects: Vec<Effect>, state: &StateIndex) -> Vec<Effect> {
    super::rewrite(effects, |effect| {
        let grants = grants_of(effect, state)?;
        Some(vec![effect.clone(), grants])
    })
}

/// The change of `access_control_policy` a canned ACL set by `effect` makes, when the effect
/// sets `acl` on a managed bucket ACL whose owner the state names.
fn grants_of(effect: &Effect, state: &StateIndex) -> Option<Effect> {
    let Change::Set { attribute, value } = &effect.change else {
        return None;
    };
    if effect.resource.resource_type != BUCKET_ACL || attribute != "acl" {
        return None;
    }
    let instance = state.instance(effect.address.as_deref()?)?;
    let owner = lookup(&instance.attributes, "access_control_policy.owner")?;
    let owner = owner.as_array().and_then(|o| o.first()).unwrap_or(owner);
    let owner_id = owner.get("id").and_then(Value::as_str)?;
    let mut grants = vec![grant(
        json!({"type": "CanonicalUser", "id": owner_id, "display_name": owner.get("display_name").cloned().unwrap_or(json!("")), "email_address": "", "uri": ""}),
        "FULL_CONTROL",
    )];
    for (group, permission) in canned(value.as_str()?)? {
        let uri = format!("http://acs.amazonaws.com/groups/{group}");
        grants.push(grant(
            json!({"type": "Group", "uri": uri, "id": "", "display_name": "", "email_address": ""}),
            permission,
        ));
    }
    let policy = json!([{"grant": grants, "owner": [owner]}]);
    let mut out = effect.clone();
    out.change = Change::Set {
        attribute: "access_control_policy".to_owned(),
        value: policy,
    };
    Some(out)
}

/// One grant block.
fn grant(grantee: Value, permission: &str) -> Value {
    json!({"grantee": [grantee], "permission": permission})
}

/// The group grants a canned ACL gives a bucket besides its owner's full control, or `None`
/// for one whose grants on a bucket are not a group's (`aws-exec-read`) or that S3 ignores on a
/// bucket (`bucket-owner-read`, `bucket-owner-full-control`).
fn canned(acl: &str) -> Option<&'static [(&'static str, &'static str)]> {
    Some(match acl {
        "private" => &[],
        "public-read" => &[("global/AllUsers", "READ")],
        "public-read-write" => &[("global/AllUsers", "READ"), ("global/AllUsers", "WRITE")],
        "authenticated-read" => &[("global/AuthenticatedUsers", "READ")],
        "log-delivery-write" => &[("s3/LogDelivery", "WRITE"), ("s3/LogDelivery", "READ_ACP")],
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::testing::{effect, index, resource};

    const OWNER: &str = "ac1721bfba39cad4586200d587bb45ab9164e7d0a20c7e28bb13b9276865aefb";

    fn acl_set(acl: &str) -> Effect {
        let change = Change::Set {
            attribute: "acl".into(),
            value: json!(acl),
        };
        effect(
            "PutBucketAcl",
            (BUCKET_ACL, "media"),
            Some("aws_s3_bucket_acl.media"),
            change,
        )
    }

    fn state() -> StateIndex {
        index(json!([resource(
            BUCKET_ACL,
            "media",
            json!({"id": "media,private", "bucket": "media", "acl": "private",
                   "access_control_policy": [{
                       "grant": [{"grantee": [{"id": OWNER, "type": "CanonicalUser"}],
                                  "permission": "FULL_CONTROL"}],
                       "owner": [{"id": OWNER, "display_name": ""}]}]})
        )]))
    }

    #[test]
    fn a_public_read_acl_grants_every_user_read_beside_the_owner() {
        let effects = with_grants(vec![acl_set("public-read")], &state());
        assert_eq!(effects.len(), 2);
        assert_eq!(effects[0].change, acl_set("public-read").change);
        let Change::Set { attribute, value } = &effects[1].change else {
            panic!("{:?}", effects[1].change);
        };
        assert_eq!(attribute, "access_control_policy");
        assert_eq!(
            *value,
            json!([{
                "grant": [
                    {"grantee": [{"type": "CanonicalUser", "id": OWNER, "display_name": "",
                                  "email_address": "", "uri": ""}],
                     "permission": "FULL_CONTROL"},
                    {"grantee": [{"type": "Group", "id": "", "display_name": "", "email_address": "",
                                  "uri": "http://acs.amazonaws.com/groups/global/AllUsers"}],
                     "permission": "READ"}
                ],
                "owner": [{"id": OWNER, "display_name": ""}]
            }])
        );
        assert_eq!(
            effects[1].address.as_deref(),
            Some("aws_s3_bucket_acl.media")
        );
    }

    #[test]
    fn an_acl_without_known_grants_or_an_unmanaged_one_stays_as_it_is() {
        let exec = acl_set("aws-exec-read");
        assert_eq!(with_grants(vec![exec.clone()], &state()), [exec]);
        let mut unmanaged = acl_set("public-read");
        unmanaged.address = None;
        assert_eq!(with_grants(vec![unmanaged.clone()], &state()), [unmanaged]);
    }
}
