#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| tunelab_fuzz::benchrun_mindie(data));
