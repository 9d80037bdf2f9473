//! The shipped list of types the provider cannot import: it loads, and every type is one of
//! the bundled provider schema, of the same provider version.

use knowledge::{NotImportable, ProviderSchema};

#[test]
fn every_type_that_cannot_be_imported_is_in_the_bundled_schema() {
    let list = NotImportable::bundled().expect("the shipped list loads");
    let schema = ProviderSchema::bundled().expect("schema loads");
    let problems = list.check_schema(schema);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Checked by hand with terraform 1.11 and the provider: "resource
    // aws_lb_target_group_attachment doesn't support import"; an SQS queue imports.
    assert!(!list.importable("aws_lb_target_group_attachment"));
    assert!(list.importable("aws_sqs_queue"));
}
