//! The shipped provider defaults: they load, and every type, argument and value fits the
//! bundled provider schema.

use knowledge::{Defaults, ProviderSchema};

#[test]
fn every_default_names_a_real_argument_and_has_its_type() {
    let table = Defaults::bundled().expect("the shipped defaults load");
    let schema = ProviderSchema::bundled().expect("schema loads");
    let problems = table.check_schema(schema);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
