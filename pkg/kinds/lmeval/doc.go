// Package lmeval translates an LMEvalJob into what its pod runs: the
// driver's command line, lm-eval's, the batch size, and the permits that
// decide online access and remote code. Pure: no API calls.
package lmeval
