from navd.cli import main

raise SystemExit(main())
