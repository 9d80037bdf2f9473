//! Loads a small hand-written `terraform providers schema -json` document, shaped after the
//! format's documentation (format_version 1.0: provider_schemas → resource_schemas → block with
//! attributes and block_types), and checks what the loader makes of it.

use std::io::Write;

use knowledge::{AttrType, Member, NestingMode, Presence, ProviderSchema, SchemaError};

/// A provider schema document as `terraform providers schema -json` prints it, trimmed to a few
/// resources. The random provider and the data sources are there to be ignored.
const DOCUMENT: &str = r#"{
  "format_version": "1.0",
  "provider_schemas": {
    "registry.terraform.io/hashicorp/random": {
      "provider": {"version": 0, "block": {"description_kind": "plain"}},
      "resource_schemas": {
        "random_id": {"version": 0, "block": {
          "attributes": {"hex": {"type": "string", "computed": true, "description_kind": "plain"}},
          "description_kind": "plain"
        }}
      }
    },
    "registry.terraform.io/hashicorp/aws": {
      "provider": {
        "version": 0,
        "block": {
          "attributes": {"region": {"type": "string", "optional": true, "description_kind": "plain"}},
          "description_kind": "plain"
        }
      },
      "resource_schemas": {
        "aws_security_group": {
          "version": 1,
          "block": {
            "attributes": {
              "arn": {"type": "string", "computed": true, "description_kind": "plain"},
              "id": {"type": "string", "optional": true, "computed": true, "description_kind": "plain"},
              "ingress": {
                "type": ["set", ["object", {
                  "cidr_blocks": ["list", "string"],
                  "description": "string",
                  "from_port": "number",
                  "protocol": "string",
                  "security_groups": ["set", "string"],
                  "self": "bool",
                  "to_port": "number"
                }]],
                "optional": true,
                "computed": true,
                "description_kind": "plain"
              },
              "name": {"type": "string", "optional": true, "computed": true, "description_kind": "plain"},
              "tags": {"type": ["map", "string"], "optional": true, "description_kind": "plain"},
              "vpc_id": {"type": "string", "optional": true, "computed": true, "description_kind": "plain"}
            },
            "block_types": {
              "timeouts": {
                "nesting_mode": "single",
                "block": {
                  "attributes": {
                    "create": {"type": "string", "optional": true, "description_kind": "plain"},
                    "delete": {"type": "string", "optional": true, "description_kind": "plain"}
                  },
                  "description_kind": "plain"
                }
              }
            },
            "description_kind": "plain"
          }
        },
        "aws_instance": {
          "version": 1,
          "block": {
            "attributes": {
              "ami": {"type": "string", "optional": true, "computed": true, "description_kind": "plain"},
              "arn": {"type": "string", "computed": true, "description_kind": "plain"},
              "instance_type": {
                "type": "string",
                "description": "Instance type to use for the instance.",
                "description_kind": "plain",
                "optional": true,
                "computed": true
              },
              "user_data": {"type": "string", "optional": true, "description_kind": "plain"},
              "vpc_security_group_ids": {"type": ["set", "string"], "optional": true, "computed": true, "description_kind": "plain"}
            },
            "block_types": {
              "ebs_block_device": {
                "nesting_mode": "set",
                "block": {
                  "attributes": {
                    "device_name": {"type": "string", "required": true, "description_kind": "plain"},
                    "volume_id": {"type": "string", "computed": true, "description_kind": "plain"},
                    "volume_size": {"type": "number", "optional": true, "computed": true, "description_kind": "plain"}
                  },
                  "description_kind": "plain"
                }
              },
              "root_block_device": {
                "nesting_mode": "list",
                "block": {
                  "attributes": {
                    "encrypted": {"type": "bool", "optional": true, "computed": true, "description_kind": "plain"}
                  },
                  "description_kind": "plain"
                },
                "max_items": 1
              }
            },
            "description_kind": "plain"
          }
        },
        "aws_db_instance": {
          "version": 2,
          "block": {
            "attributes": {
              "password": {"type": "string", "optional": true, "sensitive": true, "description_kind": "plain"},
              "password_wo": {"type": "string", "optional": true, "sensitive": true, "write_only": true, "description_kind": "plain"},
              "username": {"type": "string", "optional": true, "computed": true, "description_kind": "plain"}
            },
            "description_kind": "plain"
          }
        },
        "aws_lb_listener": {
          "version": 0,
          "block": {
            "attributes": {
              "port": {"type": "number", "optional": true, "description_kind": "plain"}
            },
            "block_types": {
              "default_action": {
                "nesting_mode": "list",
                "block": {
                  "attributes": {
                    "type": {"type": "string", "required": true, "description_kind": "plain"}
                  },
                  "block_types": {
                    "forward": {
                      "nesting_mode": "list",
                      "block": {
                        "block_types": {
                          "target_group": {
                            "nesting_mode": "set",
                            "block": {
                              "attributes": {"arn": {"type": "string", "required": true, "description_kind": "plain"}},
                              "description_kind": "plain"
                            },
                            "min_items": 1,
                            "max_items": 5
                          }
                        },
                        "description_kind": "plain"
                      },
                      "max_items": 1
                    }
                  },
                  "description_kind": "plain"
                },
                "min_items": 1
              }
            },
            "description_kind": "plain"
          }
        },
        "aws_s3_bucket_versioning": {
          "version": 0,
          "block": {
            "attributes": {
              "bucket": {"type": "string", "required": true, "description_kind": "plain"},
              "expected_bucket_owner": {"type": "string", "optional": true, "description_kind": "plain"},
              "id": {"type": "string", "optional": true, "computed": true, "description_kind": "plain"},
              "mfa": {"type": "string", "optional": true, "description_kind": "plain"}
            },
            "block_types": {
              "versioning_configuration": {
                "nesting_mode": "list",
                "block": {
                  "attributes": {
                    "mfa_delete": {"type": "string", "optional": true, "computed": true, "description_kind": "plain"},
                    "status": {"type": "string", "required": true, "description_kind": "plain"}
                  },
                  "description_kind": "plain"
                },
                "min_items": 1,
                "max_items": 1
              }
            },
            "description_kind": "plain"
          }
        },
        "aws_vpc_lattice_thing": {
          "version": 0,
          "block": {
            "attributes": {
              "listener": {
                "nested_type": {
                  "attributes": {
                    "port": {"type": "number", "required": true, "description_kind": "plain"},
                    "protocol": {"type": "string", "optional": true, "computed": true, "description_kind": "plain"}
                  },
                  "nesting_mode": "single"
                },
                "optional": true,
                "description_kind": "plain"
              }
            },
            "description_kind": "plain"
          }
        }
      },
      "data_source_schemas": {
        "aws_ami": {"version": 0, "block": {
          "attributes": {"id": {"type": "string", "computed": true, "description_kind": "plain"}},
          "description_kind": "plain"
        }}
      }
    }
  }
}"#;

fn load() -> ProviderSchema {
    ProviderSchema::from_terraform_json(DOCUMENT.as_bytes()).expect("the document loads")
}

fn block<'a>(schema: &'a ProviderSchema, resource: &str, path: &str) -> &'a knowledge::NestedBlock {
    match schema.resource(resource).and_then(|r| r.member(path)) {
        Some(Member::Block(block)) => block,
        other => panic!("{resource}.{path} is not a block: {other:?}"),
    }
}

#[test]
fn keeps_only_the_aws_resource_schemas() {
    let schema = load();
    assert_eq!(schema.provider(), "registry.terraform.io/hashicorp/aws");
    assert_eq!(schema.provider_version(), None);
    let types: Vec<&str> = schema.resource_types().collect();
    assert_eq!(
        types,
        [
            "aws_db_instance",
            "aws_instance",
            "aws_lb_listener",
            "aws_s3_bucket_versioning",
            "aws_security_group",
            "aws_vpc_lattice_thing"
        ]
    );
    assert!(
        schema.resource("aws_ami").is_none(),
        "data sources are not resources"
    );
    assert!(schema.resource("random_id").is_none());
    assert_eq!(
        schema.resource("aws_db_instance").and_then(|r| r.version),
        Some(2)
    );
}

#[test]
fn reads_flags_types_and_descriptions() {
    let schema = load();
    assert!(schema.is_computed_only("aws_instance", "arn"));
    assert!(schema.is_optional_computed("aws_instance", "ami"));
    let user_data = schema
        .attribute("aws_instance", "user_data")
        .expect("user_data");
    assert_eq!(
        (user_data.presence, &user_data.ty),
        (Presence::Optional, &AttrType::String)
    );
    let sgs = schema
        .attribute("aws_instance", "vpc_security_group_ids")
        .expect("sg ids");
    assert_eq!(sgs.ty.to_string(), "set(string)");
    let instance_type = schema
        .attribute("aws_instance", "instance_type")
        .expect("instance_type");
    assert_eq!(
        instance_type.description.as_deref(),
        Some("Instance type to use for the instance.")
    );
    let tags = schema
        .attribute("aws_security_group", "tags")
        .expect("tags");
    assert_eq!(tags.ty.to_string(), "map(string)");
}

#[test]
fn reads_sensitive_and_write_only() {
    let schema = load();
    let password = schema
        .attribute("aws_db_instance", "password")
        .expect("password");
    assert!(password.sensitive && !password.write_only);
    let password_wo = schema
        .attribute("aws_db_instance", "password_wo")
        .expect("password_wo");
    assert!(password_wo.sensitive && password_wo.write_only);
    assert!(
        !schema
            .attribute("aws_db_instance", "username")
            .expect("username")
            .sensitive
    );
}

#[test]
fn reads_block_nesting_and_item_limits() {
    let schema = load();
    let ebs = block(&schema, "aws_instance", "ebs_block_device");
    assert_eq!(
        (ebs.nesting, ebs.min_items, ebs.max_items),
        (NestingMode::Set, 0, None)
    );
    assert!(schema.is_set_block("aws_instance", "ebs_block_device"));
    let root = block(&schema, "aws_instance", "root_block_device");
    assert_eq!((root.nesting, root.max_items), (NestingMode::List, Some(1)));
    assert!(!schema.is_set_block("aws_instance", "root_block_device"));
    let timeouts = block(&schema, "aws_security_group", "timeouts");
    assert_eq!(timeouts.nesting, NestingMode::Single);
    let action = block(&schema, "aws_lb_listener", "default_action");
    assert_eq!((action.min_items, action.max_items), (1, None));
    let target = block(
        &schema,
        "aws_lb_listener",
        "default_action.forward.target_group",
    );
    assert_eq!(
        (target.nesting, target.min_items, target.max_items),
        (NestingMode::Set, 1, Some(5))
    );
}

#[test]
fn paths_reach_into_blocks() {
    let schema = load();
    let device = schema
        .attribute("aws_instance", "ebs_block_device.device_name")
        .expect("device_name");
    assert_eq!(device.presence, Presence::Required);
    assert!(schema.is_computed_only("aws_instance", "ebs_block_device.volume_id"));
    assert!(schema.is_optional_computed("aws_instance", "root_block_device.encrypted"));
    let arn = schema
        .attribute("aws_lb_listener", "default_action.forward.target_group.arn")
        .expect("arn");
    assert_eq!(arn.presence, Presence::Required);
    assert!(
        schema
            .attribute("aws_instance", "ebs_block_device")
            .is_none(),
        "a block is not an attribute"
    );
    assert!(
        schema
            .attribute("aws_instance", "ebs_block_device.nothing")
            .is_none()
    );
}

#[test]
fn set_of_objects_attribute_acts_as_a_set_block() {
    let schema = load();
    assert!(schema.is_optional_computed("aws_security_group", "ingress"));
    assert!(schema.is_set_block("aws_security_group", "ingress"));
    let ingress = schema
        .attribute("aws_security_group", "ingress")
        .expect("ingress");
    assert!(
        ingress
            .ty
            .to_string()
            .starts_with("set(object({cidr_blocks = list(string), description = string")
    );
    // The JSON has no per-field flags for object types: fields read as optional.
    let from_port = schema
        .attribute("aws_security_group", "ingress.from_port")
        .expect("from_port");
    assert_eq!(
        (from_port.presence, &from_port.ty),
        (Presence::Optional, &AttrType::Number)
    );
    let groups = schema
        .attribute("aws_security_group", "ingress.security_groups")
        .expect("groups");
    assert_eq!(groups.ty.to_string(), "set(string)");
}

#[test]
fn nested_type_attributes_keep_their_flags() {
    let schema = load();
    let listener = schema
        .attribute("aws_vpc_lattice_thing", "listener")
        .expect("listener");
    assert_eq!(
        listener.ty.to_string(),
        "object({port = number, protocol = string})"
    );
    assert!(!schema.is_set_block("aws_vpc_lattice_thing", "listener"));
    let port = schema
        .attribute("aws_vpc_lattice_thing", "listener.port")
        .expect("port");
    assert_eq!(port.presence, Presence::Required);
    assert!(schema.is_optional_computed("aws_vpc_lattice_thing", "listener.protocol"));
}

#[test]
fn both_loaders_agree_on_a_resource() {
    let from_json = load();
    let bundled = ProviderSchema::bundled().expect("bundled data loads");
    let a = from_json
        .resource("aws_s3_bucket_versioning")
        .expect("in the document");
    let b = bundled
        .resource("aws_s3_bucket_versioning")
        .expect("bundled");
    assert_eq!(a.block, b.block);
}

#[test]
fn file_loader_names_the_file_in_errors() {
    let mut file = tempfile::NamedTempFile::new().expect("temp file");
    file.write_all(DOCUMENT.as_bytes()).expect("write");
    let schema = ProviderSchema::from_terraform_json_file(file.path()).expect("loads from a file");
    assert!(schema.resource("aws_instance").is_some());

    let mut broken = tempfile::NamedTempFile::new().expect("temp file");
    broken
        .write_all(
            br#"{"format_version": "1.0", "provider_schemas": {"x": {"resource_schemas": 7}}}"#,
        )
        .expect("write");
    let err = ProviderSchema::from_terraform_json_file(broken.path()).expect_err("shape error");
    let SchemaError::Json {
        source_name, field, ..
    } = &err
    else {
        panic!("unexpected {err}")
    };
    assert_eq!(source_name, &broken.path().display().to_string());
    assert_eq!(field, "provider_schemas.x.resource_schemas");
}
