from ortpool.cli import main

raise SystemExit(main())
