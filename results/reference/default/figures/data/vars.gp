# written by analysis/figures.py: values for analysis/gnuplot/*.gp
campaign = "default"
cdf_after_failure_labels = "recreate-copy/ranks=8 recreate-inplace/ranks=8 spare/ranks=9"
cdf_before_failure_labels = "recreate-copy/ranks=8 recreate-inplace/ranks=8 spare/ranks=9"
cdf_total_runs = 3
detect_ymax_ms = 7.287305999999999
phase_labels = "recreate-copy/ranks=8 recreate-inplace/ranks=8 spare/ranks=9"
phase_total_runs = 3
phase_ymax_ms = 35.64280599999999
timeline_kills = "1 1 1"
timeline_labels = "recreate-copy/ranks=8 recreate-inplace/ranks=8 spare/ranks=9"
timeline_runs = "1 1 1"
timeline_spans = "1 1 1"
timeline_total_runs = 3
