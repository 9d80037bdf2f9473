//! An edit tool on any HCL text that parses: setting an attribute on its first resource block
//! leaves a text that parses, with every byte before and after that block as it was, and no
//! raw direction override. (A byte-for-byte print of `terraform::source` was dropped from this
//! target after it found six cases `hcl::edit` does not print back exactly; see
//! ARCHITECTURE.md. The edit tools splice the original text and do not print through it.)
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| reconciler::fuzzing::hcl_edit(data));
