from freyr_dspy.cli import main

raise SystemExit(main())
