"""A Spark SQL execution's plan, read in three steps (all pure):

1. tree.py: the plan text as a typed tree: the sparkPlanInfo object as InfoNodes, the
   physicalPlanDescription as PlanNodes (nodes.py: kind, input and output attributes with
   their expression ids, expressions, children); a view's logical plan read as the physical
   nodes that do the same.
2. tables.py: the datasets the execution reads and writes (`plan_io`).
3. columns.py: its column lineage (`column_flows`): one handler per node kind, one pass over
   the nodes, a column graph (graph.py) searched from each written column; argument lists
   Spark cut are recovered or flagged (cut.py).

model.py holds what they give (and the errors); text.py how Spark prints lists, attributes and
identifiers. Callers import from the module that holds a name.
"""
