//! The settings value parser on anything: the first byte picks the type, the rest is the text an
//! operator typed. It must never panic, and a value it accepts is of the type and holds no control
//! character but tab and newline.
#![no_main]

use mesh::catalogue::SettingType;
use mesh::catalogue::setting::control_character;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((pick, text)) = data.split_first() else {
        return;
    };
    let kind = SettingType::ALL[usize::from(*pick) % SettingType::ALL.len()];
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    if let Ok(value) = kind.parse_value(text) {
        assert!(kind.admits(&value), "{kind:?} accepted {value}");
        assert_eq!(control_character(&value), None, "{value}");
    }
});
