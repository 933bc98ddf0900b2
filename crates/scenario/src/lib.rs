//! tunelab-scenario
