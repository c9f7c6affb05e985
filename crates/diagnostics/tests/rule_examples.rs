//! Each rule's documentation is a test: its example (what `gpulens explain`
//! shows) raises the rule, and its "use instead" does not.

use gpulens_diagnostics::{check, Code, Settings, RULES};
use gpulens_gpu::GpuProfile;

fn codes(text: &str, gpu: &GpuProfile) -> Vec<Code> {
    let tree = gpulens_syntax::parse(text);
    check(text, &tree, &Settings::default(), gpu).iter().map(|f| f.code).collect()
}

#[test]
fn every_example_raises_its_rule_and_its_fix_does_not() {
    let mut wrong = Vec::new();
    for rule in RULES {
        // Advice on float64 speed needs a GPU that is slow at it.
        let gpu = if rule.code == "GPU010" { GpuProfile::target("RTX 4090").unwrap() } else { GpuProfile::none() };
        let raised = codes(rule.example(), &gpu);
        if !raised.contains(&rule.code) {
            wrong.push(format!("{}: its example raises {raised:?}", rule.code));
        }
        let after = codes(rule.use_instead(), &gpu);
        if after.contains(&rule.code) {
            wrong.push(format!("{}: its \"use instead\" raises it too", rule.code));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
