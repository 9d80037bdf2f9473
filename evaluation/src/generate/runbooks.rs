//! More AWS-owned SSM Automation runbooks, each the API call its `aws:executeAwsApi` step
//! makes (from the Automation runbook reference), for settings a project leaves
//! non-compliant. They join only the runbook category's pool, so the other categories'
//! candidates stay as they were.

use super::change::{Change, req, text};
use reconciler::terraform::state::{Instance, Mode, State};
use serde_json::json;

/// The runbook changes that apply to the managed instances of `state`.
pub fn changes(state: &State) -> Vec<Change> {
    state
        .instances
        .iter()
        .filter(|i| i.mode == Mode::Managed && i.deposed.is_none())
        .filter_map(|i| match i.resource_type.as_str() {
            "aws_lambda_function" => xray_tracing(i),
            "aws_db_instance" => minor_version_upgrade(i),
            "aws_default_security_group" => super::vpc::remove_default_rules(i),
            _ => None,
        })
        .collect()
}

/// AWSConfigRemediation-ConfigureLambdaFunctionXRayTracing: `UpdateFunctionConfiguration`
/// with `TracingConfig.Mode = Active`.
fn xray_tracing(instance: &Instance) -> Option<Change> {
    let mode = instance.attributes["tracing_config"][0]["mode"]
        .as_str()
        .unwrap_or("PassThrough");
    if mode == "Active" {
        return None;
    }
    let name = text(instance, "function_name");
    let set = |mode: &str| {
        req(
            "lambda.amazonaws.com",
            "UpdateFunctionConfiguration",
            json!({"functionName": name, "tracingConfig": {"mode": mode}}),
        )
    };
    Some(
        Change::modify(
            "lambda-xray-tracing",
            instance,
            format!("turned on X-Ray active tracing for {name}"),
            &["tracing_config"],
            vec![set("Active")],
        )
        .undo(vec![set(mode)])
        .runbook("AWSConfigRemediation-ConfigureLambdaFunctionXRayTracing"),
    )
}

/// AWSConfigRemediation-EnableMinorVersionUpgradeOnRDSDBInstance: `ModifyDBInstance` with
/// `AutoMinorVersionUpgrade = true`.
fn minor_version_upgrade(instance: &Instance) -> Option<Change> {
    if instance.attributes["auto_minor_version_upgrade"] != json!(false) {
        return None;
    }
    let id = text(instance, "identifier");
    let set = |on: bool| {
        req(
            "rds.amazonaws.com",
            "ModifyDBInstance",
            json!({"dBInstanceIdentifier": id, "autoMinorVersionUpgrade": on}),
        )
    };
    Some(
        Change::modify(
            "rds-minor-version-upgrade",
            instance,
            format!("turned on automatic minor version upgrades for {id}"),
            &["auto_minor_version_upgrade"],
            vec![set(true)],
        )
        .undo(vec![set(false)])
        .runbook("AWSConfigRemediation-EnableMinorVersionUpgradeOnRDSDBInstance"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(attributes: &str, resource_type: &str) -> State {
        let text = format!(
            r#"{{"version":4,"terraform_version":"1.9.0","serial":1,"lineage":"l","resources":[
              {{"mode":"managed","type":"{resource_type}","name":"x","provider":"provider[\"registry.terraform.io/hashicorp/aws\"]",
               "instances":[{{"schema_version":0,"attributes":{attributes}}}]}}]}}"#
        );
        State::parse(text.as_bytes(), "test").expect("the state parses")
    }

    #[test]
    fn only_non_compliant_settings_get_a_runbook() {
        let passthrough = state(
            r#"{"id":"f","function_name":"f","tracing_config":[{"mode":"PassThrough"}]}"#,
            "aws_lambda_function",
        );
        let found = changes(&passthrough);
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].calls[0].request_parameters["tracingConfig"]["mode"],
            "Active"
        );
        let active = state(
            r#"{"id":"f","function_name":"f","tracing_config":[{"mode":"Active"}]}"#,
            "aws_lambda_function",
        );
        assert!(changes(&active).is_empty());
        let db = state(
            r#"{"id":"d","identifier":"d","auto_minor_version_upgrade":false}"#,
            "aws_db_instance",
        );
        assert_eq!(changes(&db)[0].paths, vec!["auto_minor_version_upgrade"]);
    }
}
